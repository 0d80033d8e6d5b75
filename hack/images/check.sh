#!/usr/bin/env bash
# Runs what `make images` saved as a runner pod and the controller pods run:
# each image read back from its OCI archive, its programs started by runc as
# uid 65532 with a read-only root filesystem, no capabilities, no new
# privileges, a tmpfs /tmp and /dev/shm, and network, PID, IPC and mount
# namespaces of their own (the network one holds only a loopback that is
# down: nothing here sends a packet).
#
#   IMAGE_TAG, IMAGES_DIR, IMAGES_WORK   as for build.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=hack/images/lib.sh
source "$root/hack/images/lib.sh"

tag=${IMAGE_TAG:-dev}
out=${IMAGES_DIR:-$root/bin/images}
work=${IMAGES_WORK:-$root/_output/images}
need buildah runc jq findmnt
[[ $(id -u) == 0 ]] || die "runc and buildah mount need root here"
mkdir -p "$work"

# The images are read back from their archives into a storage of this check
# alone, so that every layer is unpacked from the archive and build.sh's
# storage (its layer cache) is left as it is.
store="$work/check-storage"
mkdir -p "$store"
cat >"$store/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$store/root"
runroot = "$store/run"
EOF
export CONTAINERS_STORAGE_CONF="$store/storage.conf"

runc_root="$work/runc"
bundles=()
cleanup() {
  local b
  for b in "${bundles[@]}"; do
    runc --root "$runc_root" delete --force "$(basename "$b")" >/dev/null 2>&1 || true
    rm -rf "$b"
  done
  cleanup_containers
  buildah rmi --all --force >/dev/null 2>&1 || true
  unmount_below "$store"
  if findmnt --list --noheadings --output TARGET | grep -qF "$store/"; then
    log "left $store: something is still mounted below it"
  else
    rm -rf "$store"
  fi
}
trap cleanup EXIT

# load ARCHIVE IMAGE: a working container of the image the archive names.
load() {
  local archive=$1 image=$2 name
  [[ -f $archive ]] || die "$archive is missing: run make images"
  name=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]')
  [[ $name == "$image" ]] || die "$archive names $name, not $image"
  timeout 600 buildah pull --quiet "oci-archive:$archive" >/dev/null
  new_container ctr "$image"
}

# expect CONTAINER FIELD WANT: a field of the image's configuration.
expect() {
  local got
  got=$(buildah inspect --format "{{$2}}" "$1")
  [[ $got == "$3" ]] || die "$1: $2 is $got, want $3"
}

# run CONTAINER WANT CMD...: runs CMD in the container's root filesystem
# with the image's environment and working directory; its output must hold
# WANT.
run() {
  local ctr=$1 want=$2 mnt bundle id output
  shift 2
  mnt=$(buildah mount "$ctr")
  bundle=$(mktemp -d "$work/check-XXXXXX")
  bundles+=("$bundle")
  id=$(basename "$bundle")
  runc spec --bundle "$bundle"
  buildah inspect "$ctr" >"$bundle/image.json"
  jq --arg root "$mnt" --arg id "$id" --slurpfile image "$bundle/image.json" \
    --argjson args "$(printf '%s\n' "$@" | jq -R . | jq -s .)" '
      $image[0].OCIv1.config as $config
      | .root = {path: $root, readonly: true}
      | .process.terminal = false
      | .process.user = {uid: 65532, gid: 65532}
      | .process.args = $args
      | .process.env = $config.Env
      | .process.cwd = (if ($config.WorkingDir // "") == "" then "/" else $config.WorkingDir end)
      | .process.capabilities = {bounding: [], effective: [], permitted: [], inheritable: [], ambient: []}
      | .process.noNewPrivileges = true
      | .hostname = "images-check"
      | .mounts += [{destination: "/tmp", type: "tmpfs", source: "tmpfs",
                     options: ["nosuid", "nodev", "mode=1777", "size=256m"]}]
      | .linux.cgroupsPath = "/browserfleet-images-check-\($id)"' \
    "$bundle/config.json" >"$bundle/config.json.new"
  mv "$bundle/config.json.new" "$bundle/config.json"
  log "run in $ctr: $*"
  if ! output=$(timeout 120 runc --root "$runc_root" run --bundle "$bundle" "$id" </dev/null 2>&1); then
    printf '%s\n' "$output" >&2
    die "$* failed in $ctr (uid 65532, read-only root)"
  fi
  runc --root "$runc_root" delete --force "$id" >/dev/null 2>&1 || true
  [[ $output == *"$want"* ]] || { printf '%s\n' "$output" >&2; die "$*: its output lacks $want"; }
  printf '%s\n' "$output" | head -n 2 | sed 's/^/    /' >&2
}

load "$out/controller.oci.tar" "ghcr.io/browserfleet/browserfleet:$tag"
expect "$ctr" .OCIv1.Config.User 65532:65532
expect "$ctr" '.OCIv1.Config.Entrypoint' '[/manager]'
run "$ctr" "Usage of /manager" /manager --help
run "$ctr" "Usage of /api" /api --help
run "$ctr" "bfkeys create" /bfkeys --help
# The controller image has no shell and no package manager.
mnt=$(buildah mount "$ctr")
for f in bin/sh usr/bin/apt-get; do
  [[ ! -e $mnt/$f && ! -L $mnt/$f ]] || die "the controller image holds /$f"
done

load "$out/runner.oci.tar" "ghcr.io/browserfleet/runner:$tag"
expect "$ctr" .OCIv1.Config.User 65532:65532
expect "$ctr" '.OCIv1.Config.Entrypoint' '[/usr/bin/tini -- /usr/local/bin/runner]'
run "$ctr" "Usage of /usr/local/bin/runner" /usr/bin/tini -- /usr/local/bin/runner --help
run "$ctr" "Chromium" /usr/bin/chromium --version
run "$ctr" "Chromium" /usr/lib/chromium/chromium-headless-shell --version
# The headless shell renders a page under the same constraints (no sandbox:
# runner pods have no user namespaces for Chromium's, docs/runner.md).
run "$ctr" '<p id="x">images-check</p>' /usr/bin/tini -- /usr/lib/chromium/chromium-headless-shell \
  --no-sandbox --disable-gpu --dump-dom 'data:text/html,<p id="x">images-check</p>'
# The caches build.sh lends to the builder stage leave nothing behind.
mnt=$(buildah mount "$ctr")
for f in go root/.cache; do
  [[ ! -e $mnt/$f ]] || die "the runner image holds /$f"
done
log "both images run as uid 65532 with a read-only root"
