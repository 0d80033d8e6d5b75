#!/usr/bin/env bash
# Builds the controller and runner images from the repo's Dockerfile with
# buildah and saves them as OCI archives in $IMAGES_DIR. No registry is
# reachable on our machines, so the three base images the Dockerfile names are
# made here first, under those exact names, from Debian's packages and the
# host's Go toolchain (bases.sh). A base whose inputs did not change since it
# was made is kept.
#
#   IMAGE_TAG     tag of both images (dev)
#   IMAGES_DIR    where the archives go (bin/images)
#   IMAGES_WORK   stamps and scratch space (_output/images)
#   DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR   Debian's archives
#   IMAGES_REBUILD_BASES=1   make the bases again (e.g. for Debian's updates)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/hack/images"
# shellcheck source=hack/images/lib.sh
source "$here/lib.sh"
# shellcheck source=hack/images/bases.sh
source "$here/bases.sh"

tag=${IMAGE_TAG:-dev}
out=${IMAGES_DIR:-$root/bin/images}
work=${IMAGES_WORK:-$root/_output/images}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
controller_image=ghcr.io/browserfleet/browserfleet:$tag
runner_image=ghcr.io/browserfleet/runner:$tag

need buildah debootstrap runc go findmnt
[[ $(id -u) == 0 ]] || die "buildah and debootstrap need root here (rootless buildah has no subuid map on these machines)"
mkdir -p "$out" "$work/stamps"

# The bases' names and versions come from the Dockerfile's build arguments,
# so that the Dockerfile stays what `docker build` uses.
go_version=$(dockerfile_arg GO_VERSION)
release=$(dockerfile_arg DEBIAN_RELEASE)
distroless=$(dockerfile_arg DISTROLESS_IMAGE)
debian_base=docker.io/library/debian:$release-slim
golang_base=docker.io/library/golang:$go_version
host_go=$(go env GOVERSION)
[[ $host_go == "go$go_version" || $host_go == "go$go_version".* ]] ||
  die "the Dockerfile builds with Go $go_version, the host has $host_go: the golang base copies the host's toolchain"

ensure_base "$debian_base" - build_debian "$release" "$mirror" "$security_mirror"
ensure_base "$golang_base" "$debian_base" build_golang "$(go env GOROOT)" "$host_go"
ensure_base "$distroless" "$debian_base" build_distroless

# The builder stage reuses the host's module and build caches: bind mounts
# of its RUNs only (the Dockerfile's RUN downloads on its own elsewhere). It
# is built alone first, because buildah would make the mount points in every
# stage that RUNs: the final images then take it from buildah's layer cache.
# --network host: RUN reaches the module proxy and Debian's mirror with the
# host's resolv.conf, and buildah makes no bridge or firewall rule.
bud() {
  local target=$1 image=$2
  shift 2
  log "image $image (Dockerfile target $target)"
  timed "image $image" timeout 3600 buildah bud \
    --pull=never --layers --network host --format oci \
    --build-arg VERSION="$tag" "$@" \
    --target "$target" --tag "$image" \
    --file "$root/Dockerfile" "$root"
}
bud builder "localhost/browserfleet-builder:$tag" \
  --volume "$(go env GOMODCACHE):/go/pkg/mod" \
  --volume "$(go env GOCACHE):/root/.cache/go-build"
bud controller "$controller_image"
bud runner "$runner_image"

# An archive is written again only when its image changed.
save() {
  local image=$1 archive=$2 id stamp
  id=$(buildah inspect --type image --format '{{.FromImageID}}' "$image")
  stamp="$work/stamps/$(basename "$archive").id"
  if [[ -f $archive && -f $stamp && $(<"$stamp") == "$id" ]]; then
    log "archive $archive holds $image (${id:0:12}) already"
    return
  fi
  rm -f "$archive.tmp"
  timed "archive $archive" timeout 900 buildah push --quiet "$image" "oci-archive:$archive.tmp:$image"
  mv "$archive.tmp" "$archive"
  echo "$id" >"$stamp"
}
save "$controller_image" "$out/controller.oci.tar"
save "$runner_image" "$out/runner.oci.tar"
ls -l "$out"/controller.oci.tar "$out"/runner.oci.tar
