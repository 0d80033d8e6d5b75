# Helpers of hack/images/build.sh and check.sh (sourced; needs $root, $work).

log() { printf 'images: %s\n' "$*" >&2; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }
# Name the command that failed, also inside functions.
set -o errtrace
trap 'log "failed (exit $?): $BASH_COMMAND (${BASH_SOURCE[0]##*/}:$LINENO)"' ERR

need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 ||
      die "$c is missing: apt-get install --no-install-recommends buildah debootstrap runc jq"
  done
}

# timed LABEL CMD...: runs CMD and records how long it took in
# $work/timings.log, which docs/install.md quotes.
timed() {
  local label=$1 start
  shift
  start=$SECONDS
  "$@"
  printf '%s\t%ds\t%s\n' "$(date -u +%FT%TZ)" "$((SECONDS - start))" "$label" | tee -a "$work/timings.log" >&2
}

# dockerfile_arg NAME: the default of a global ARG of the Dockerfile.
dockerfile_arg() {
  local v
  v=$(sed -n "s/^ARG $1=//p" "$root/Dockerfile" | head -n1)
  [[ -n $v ]] || die "the Dockerfile has no default for ARG $1"
  echo "$v"
}

# image_id IMAGE: its ID in buildah's storage, empty when it has none.
image_id() {
  buildah images --noheading --no-trunc --format '{{.ID}}' "$1" 2>/dev/null | head -n1 || true
}

# Working containers of this run, removed (and their mounts undone) on exit,
# also when a step fails half-way.
containers=()
# new_container VAR FROM_ARGS...: sets VAR to a new working container.
new_container() {
  local var=$1 c
  shift
  c=$(buildah from --pull=never "$@")
  containers+=("$c")
  printf -v "$var" '%s' "$c"
}
unmount_below() {
  local dir=$1 m
  [[ -n $dir ]] || return 0
  # Deepest first: debootstrap mounts proc and sys inside its target.
  { findmnt --list --noheadings --output TARGET | grep -F "$dir/" || true; } | sort -r |
    while read -r m; do umount "$m" || umount -l "$m" || true; done
}
cleanup_containers() {
  local c mnt
  for c in "${containers[@]}"; do
    mnt=$(buildah inspect --format '{{.MountPoint}}' "$c" 2>/dev/null || true)
    unmount_below "$mnt"
    buildah rm "$c" >/dev/null 2>&1 || true
  done
  containers=()
}
trap cleanup_containers EXIT

# ensure_base IMAGE PARENT BUILD_FN ARGS...: makes IMAGE with BUILD_FN
# unless its stamp says it was made from the same inputs: the function's own
# text, its arguments and its parent image's ID (PARENT "-" for none).
ensure_base() {
  local image=$1 parent=$2 fn=$3 inputs have stamp id
  shift 3
  inputs=$({
    declare -f "$fn"
    printf '%s\n' "$@"
    [[ $parent == - ]] || image_id "$parent"
  } | sha256sum | cut -d' ' -f1)
  stamp="$work/stamps/base-$(tr -c 'A-Za-z0-9._-' _ <<<"$image")"
  id=$(image_id "$image")
  have=""
  [[ -f $stamp ]] && have=$(<"$stamp")
  if [[ -z ${IMAGES_REBUILD_BASES:-} && -n $id && $have == "$inputs $id" ]]; then
    log "base $image present (${id:0:12})"
    return
  fi
  log "base $image: making it"
  timed "base $image" "$fn" "$image" "$parent" "$@"
  cleanup_containers
  id=$(image_id "$image")
  [[ -n $id ]] || die "base $image: not in buildah's storage after it was made"
  echo "$inputs $id" >"$stamp"
}
