#!/usr/bin/env bash
# Builds the images of docker/ with podman on a machine without a Docker engine or an image
# registry (the project's CI: Debian bookworm, root, no systemd), for tests/sidecar/test_container.py
# and test_compose.py. `make container-images` runs it; every step is skipped when already done:
#   1. tools: apt-get installs podman, buildah, runc, debootstrap, netavark + aardvark-dns (the
#      compose network and its service names) and docker-compose (run against podman's Docker API);
#   2. base: a Debian bookworm image with python3 and its venv module, made with debootstrap from
#      the configured Debian mirror, with the host's CA bundle, and imported as $BASE_IMAGE (no
#      registry to pull python:3.11-slim from); made once, again only when BASE_RECIPE changes;
#   3. images: docker/Dockerfile as mockbroker:dev and docker/example/Dockerfile as
#      mockbroker-example:dev, on that base; rebuilt only when their inputs changed (a hash of
#      them is the image's label). Build times go to build/container/build-times.log.
# podman's settings come from docker/ci/containers.conf (CONTAINERS_CONF). Not root: says so and
# exits 0 without building; the container tests then skip (fail under CI=true).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
export CONTAINERS_CONF=${CONTAINERS_CONF:-$REPO/docker/ci/containers.conf}

BASE_IMAGE=localhost/debian-python:bookworm
# Bump when the base's recipe below changes: the cached base is then made again.
BASE_RECIPE=2
IMAGE=localhost/mockbroker:dev
EXAMPLE_IMAGE=localhost/mockbroker-example:dev
APT_PACKAGES="podman buildah runc debootstrap netavark aardvark-dns docker-compose"
# The build's pip reaches PyPI through this machine's TLS set-up: the host's CA bundle is
# mounted where Debian's (and the venv's pip) look for it.
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
LOG_DIR=$REPO/build/container

say() { echo "container-images: $*" >&2; }

tools() {
  local missing="" pkg
  for pkg in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing="$missing $pkg"
  done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "missing$missing and this is not root with apt-get (Debian/Ubuntu: sudo apt-get install -y$missing)." \
      "The container tests skip locally, fail under CI=true."
    return 1
  fi
  say "installing$missing with apt-get"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

label() {  # label IMAGE KEY: the image's label, empty when the image or the label is absent
  podman image inspect --format "{{index .Labels \"$2\"}}" "$1" 2>/dev/null || true
}

# The first Debian mirror of the machine's apt sources (deb822 or one-line format).
debian_mirror() {
  local uri
  uri=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1) || true
  [ -n "$uri" ] || uri=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
    awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' | grep -v security | head -1) || true
  echo "${uri:-http://deb.debian.org/debian}"
}

base() {
  if [ "$(label "$BASE_IMAGE" org.mockbroker.base-recipe)" = "$BASE_RECIPE" ]; then return 0; fi
  local rootfs mirror start
  mirror=$(debian_mirror)
  rootfs=$(mktemp -d /var/tmp/mockbroker-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' RETURN
  start=$(date +%s)
  say "making $BASE_IMAGE with debootstrap from $mirror (once; about a minute)"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$rootfs" "$mirror" >"$LOG_DIR/debootstrap.log" 2>&1 ||
    { tail -20 "$LOG_DIR/debootstrap.log" >&2; return 1; }
  # What an image does not need: the downloaded packages, apt's lists, docs, man pages, locales
  # (the slim Python images leave them out too). 275 MB -> 133 MB.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/info/*
  # The host's CA bundle, so that a plain `podman build` on this base reaches PyPI as the host
  # does (the machines may reach it through a proxy whose CA only the host's bundle has).
  if [ -f "$CA_BUNDLE" ]; then cp "$CA_BUNDLE" "$rootfs$CA_BUNDLE"; fi
  tar -C "$rootfs" -c . | podman import --quiet \
    --change "LABEL org.mockbroker.base-recipe=$BASE_RECIPE" --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
  echo "$(date -u +%FT%TZ) base $BASE_IMAGE $(( $(date +%s) - start ))s" >>"$LOG_DIR/build-times.log"
}

inputs_hash() {  # inputs_hash FILE... DIR...: a hash of the named files and the sources under the dirs
  local p
  { echo "base $BASE_IMAGE recipe $BASE_RECIPE"; for p in "$@"; do
    if [ -d "$p" ]; then
      find "$p" -type f ! -name '*.pyc' ! -name '*.so' ! -path '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum
    else
      sha256sum "$p"
    fi
  done; } | sha256sum | cut -c1-16
}

build() {  # build IMAGE HASH CONTEXT [podman build args]
  local image=$1 hash=$2 context=$3 start
  shift 3
  if [ "$(label "$image" org.mockbroker.inputs)" = "$hash" ]; then return 0; fi
  say "building $image on $BASE_IMAGE"
  start=$(date +%s)
  # Docker's format keeps the HEALTHCHECK; chroot isolation and the host's network because the
  # build's RUN steps need no namespaces of their own and reach PyPI as the host does.
  podman build --quiet --format docker --isolation chroot --network host \
    -v "$CA_BUNDLE:$CA_BUNDLE:ro" --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    --label "org.mockbroker.inputs=$hash" -t "$image" "$@" "$context" >"$LOG_DIR/build.log" 2>&1 ||
    { tail -30 "$LOG_DIR/build.log" >&2; return 1; }
  local size
  size=$(podman image inspect --format '{{.Size}}' "$image")
  echo "$(date -u +%FT%TZ) image $image $(( $(date +%s) - start ))s $(( size / 1000000 )) MB" >>"$LOG_DIR/build-times.log"
}

images() {
  build "$IMAGE" "$(inputs_hash docker/Dockerfile .dockerignore pyproject.toml setup.py README.md \
    mockbroker mockbroker_protocol mockbroker_assignors)" . -f docker/Dockerfile
  build "$EXAMPLE_IMAGE" "$(inputs_hash docker/example)" docker/example
  podman image prune --force >/dev/null 2>&1 || true  # the dangling images of earlier builds
}

mkdir -p "$LOG_DIR"
case "${1:-all}" in
  tools) tools ;;
  base) base ;;
  images) images ;;
  all)
    tools || exit 0
    if [ "$(id -u)" != 0 ]; then
      # debootstrap and the storage the tests share want root; by hand: docker/README.md.
      say "not root: the images are not built here. The container tests skip locally, fail under CI=true."
      exit 0
    fi
    base
    images
    ;;
  *) echo "usage: $0 [all|tools|base|images]" >&2; exit 2 ;;
esac
