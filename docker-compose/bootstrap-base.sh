#!/usr/bin/env bash
# Bootstraps the compose image's Debian 12 base from Debian's own mirror when no image registry
# is reachable (mmdebstrap into a tarball, then `podman import`), with the runtime packages the
# daemons need already installed, so that the Dockerfile's runtime stage has nothing to fetch.
#
#   bootstrap-base.sh CACHE_DIR    prints the image name (newtricks/base:<key>) on stdout
#
# The tarball is cached as CACHE_DIR/base-<key>.tar, keyed by a hash of this script, the
# package list and the mirror: only the first run on a machine pays for the bootstrap. The
# image is imported again from the tarball whenever podman no longer has it.
set -euo pipefail
cache=${1:?usage: bootstrap-base.sh CACHE_DIR}
here=$(cd "$(dirname "$0")" && pwd)

# What the daemons and the conformance kit run on: Java 17 for Hadoop, the FFmpeg 5.1 and
# libjpeg-turbo libraries datanode-ext links, procps (pgrep/ps, for admins and the compose
# test's kill case). Keep in step with the runtime stage of the Dockerfile.
PACKAGES=openjdk-17-jre-headless,libavformat59,libavcodec59,libswscale6,libavutil57,libjpeg62-turbo,procps,ca-certificates

# The mirror apt uses on this host (deb822 or one-line sources), else Debian's default.
mirror=$(grep -rhoE '^(URIs:|deb) +(\[[^]]*\] +)?https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | grep -oE 'https?://[^ ]+' | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=${mirror%/debian}/debian-security
sources="deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main"

key=$( { cat "$0"; echo "$PACKAGES"; echo "$sources"; } | sha256sum | cut -c1-16)
image=newtricks/base:$key
tar=$cache/base-$key.tar
mkdir -p "$cache"

if podman image exists "$image"; then
  echo "$image"
  exit 0
fi
if [ ! -s "$tar" ]; then
  echo "bootstrapping Debian 12 from $mirror into $tar (first run only)" >&2
  start=$(date +%s)
  rm -f "$tar.tmp"
  # minbase: essential packages and apt; no docs or locales in the image (man pages stay:
  # update-alternatives of the JRE links into /usr/share/man/man1). Debian's own python3 for
  # mmtarfilter, whatever else is first on PATH.
  PATH=/usr/sbin:/usr/bin:/sbin:/bin mmdebstrap ${MMDEBSTRAP_FLAGS:---quiet} --variant=minbase --format=tar --include="$PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --aptopt='Acquire::Languages "none"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    bookworm "$tar.tmp" - <<<"$sources" >&2
  mv "$tar.tmp" "$tar"
  # Older bases (other keys) are not needed any more.
  find "$cache" -maxdepth 1 -name 'base-*.tar' ! -name "base-$key.tar" -delete
  echo "bootstrapped in $(( $(date +%s) - start ))s ($(du -h "$tar" | cut -f1))" >&2
fi
podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' "$tar" "$image" >/dev/null
echo "$image"
