# The base images the Dockerfile names, made locally because no registry is
# reachable (sourced by build.sh). Each function makes one image; its text is
# part of the image's inputs (ensure_base), so an edit here remakes it.
# Arguments: IMAGE PARENT then their own.

# build_debian IMAGE - RELEASE MIRROR SECURITY_MIRROR: debian:<release>-slim,
# a debootstrap minbase system trimmed as Debian's official slim images are
# (debuerreotype): no documentation, manuals or locales, now or from later
# installs; apt keeps no package lists or archives; no service starts.
build_debian() {
  local image=$1 release=$3 mirror=$4 security=$5 ctr mnt
  new_container ctr scratch
  mnt=$(buildah mount "$ctr")
  timed "debootstrap $release" timeout 1800 \
    debootstrap --variant=minbase --components=main "$release" "$mnt" "$mirror"

  rm -f "$mnt/etc/apt/sources.list"
  cat >"$mnt/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$mnt/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# As Debian's slim images: no documentation but the licences, no manuals,
# no translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  cat >"$mnt/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$mnt/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$mnt/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$mnt/etc/apt/apt.conf.d/docker-autoremove-suggests"
  printf '#!/bin/sh\n# No service starts while an image is built.\nexit 101\n' >"$mnt/usr/sbin/policy-rc.d"
  chmod 0755 "$mnt/usr/sbin/policy-rc.d"

  # What the excludes would have left out, and what debootstrap took from
  # this host (its resolv.conf and hostname: the runtime provides them).
  find "$mnt/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$mnt/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$mnt"/usr/share/{groff,info,linda,locale,man}/* "$mnt"/usr/share/lintian/overrides/*
  rm -rf "$mnt"/var/lib/apt/lists/* "$mnt"/var/cache/apt/*.bin "$mnt"/var/cache/apt/archives/*.deb \
    "$mnt"/var/cache/debconf/*-old "$mnt"/var/lib/dpkg/*-old "$mnt"/tmp/* "$mnt"/var/tmp/*
  find "$mnt/var/log" -type f -delete
  rm -f "$mnt/etc/resolv.conf"
  : >"$mnt/etc/hostname"
  chmod 0644 "$mnt/etc/hostname"
  : >"$mnt/etc/machine-id"

  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash "$ctr"
  buildah commit --quiet --format oci "$ctr" "$image" >/dev/null
}

# build_golang IMAGE PARENT GOROOT GOVERSION: golang:<version>, the Debian
# base with git and ca-certificates (what `go mod download` needs) and the
# host's Go toolchain in /usr/local/go, set up as the official image is.
build_golang() {
  local image=$1 parent=$2 goroot=$3 version=$4 ctr mnt
  new_container ctr "$parent"
  apt_install "$ctr" ca-certificates git
  mnt=$(buildah mount "$ctr")
  mkdir -p "$mnt/usr/local/go"
  cp -a "$goroot/." "$mnt/usr/local/go/"
  mkdir -p "$mnt/go/src" "$mnt/go/bin"
  chmod -R 1777 "$mnt/go"
  buildah config \
    --env GOLANG_VERSION="${version#go}" --env GOTOOLCHAIN=local --env GOPATH=/go \
    --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --workingdir /go --cmd bash "$ctr"
  buildah commit --quiet --format oci "$ctr" "$image" >/dev/null
}

# build_distroless IMAGE PARENT: gcr.io/distroless/static-debian12:nonroot,
# from scratch as distroless is: root and nonroot (65532) users, CA
# certificates and time zones from Debian's packages, /tmp, no shell and no
# package manager; runs as 65532 in /home/nonroot.
build_distroless() {
  local image=$1 parent=$2 donor dmnt ctr mnt f
  # The files come from Debian's packages, installed in a throwaway copy of
  # the Debian base.
  new_container donor "$parent"
  apt_install "$donor" ca-certificates tzdata
  dmnt=$(buildah mount "$donor")
  new_container ctr scratch
  mnt=$(buildah mount "$ctr")

  install -d -m 0755 "$mnt"/{etc/ssl/certs,usr/share/doc,var/lib}
  install -d -m 1777 "$mnt/tmp"
  install -d -m 0700 "$mnt/root"
  install -d -m 0700 -o 65532 -g 65532 "$mnt/home/nonroot"
  cat >"$mnt/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"$mnt/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
  cat >"$mnt/etc/nsswitch.conf" <<'EOF'
passwd: files
group: files
hosts: files dns
EOF
  chmod 0644 "$mnt"/etc/{passwd,group,nsswitch.conf}
  cp -L "$dmnt/etc/os-release" "$mnt/etc/os-release"
  cp -L "$dmnt/etc/ssl/certs/ca-certificates.crt" "$mnt/etc/ssl/certs/"
  cp -a "$dmnt/usr/share/zoneinfo" "$mnt/usr/share/"
  for f in base-files ca-certificates tzdata; do
    install -D -m 0644 "$dmnt/usr/share/doc/$f/copyright" "$mnt/usr/share/doc/$f/copyright"
  done

  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    --user 65532:65532 --workingdir /home/nonroot "$ctr"
  buildah commit --quiet --format oci "$ctr" "$image" >/dev/null
}

# apt_install CONTAINER PACKAGES...: Debian packages into a working
# container, without leaving apt's lists behind. chroot isolation: no OCI
# runtime, cgroup or network namespace is needed for it.
apt_install() {
  local ctr=$1
  shift
  timed "apt-get install $*" timeout 900 buildah run --isolation chroot "$ctr" -- sh -ec '
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    rm -rf /var/lib/apt/lists/*' sh "$@"
}
