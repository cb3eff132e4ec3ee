#!/usr/bin/env bash
# Installs podman, podman-compose and mmdebstrap from Debian and sets what podman needs on
# this kind of machine: `[containers] default_ulimits = []` in containers.conf (the sandbox
# refuses podman's default RLIMIT_NOFILE). Idempotent and quick when done.
set -euo pipefail
PACKAGES="podman podman-compose mmdebstrap netavark aardvark-dns"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
missing=""
for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "apt-get install:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

conf=/etc/containers/containers.conf
if ! grep -qE '^[[:space:]]*default_ulimits[[:space:]]*=[[:space:]]*\[[[:space:]]*\]' "$conf" 2>/dev/null; then
  echo "setting [containers] default_ulimits = [] in $conf"
  $SUDO mkdir -p "$(dirname "$conf")"
  $SUDO touch "$conf"
  if grep -qE '^[[:space:]]*default_ulimits[[:space:]]*=' "$conf"; then
    # one-line setting only (a multi-line list would need a TOML editor)
    $SUDO sed -i -E 's/^[[:space:]]*default_ulimits[[:space:]]*=.*/default_ulimits = []/' "$conf"
  elif grep -qE '^\[containers\]' "$conf"; then
    $SUDO sed -i -E '0,/^\[containers\]/s//[containers]\ndefault_ulimits = []/' "$conf"
  else
    printf '\n[containers]\ndefault_ulimits = []\n' | $SUDO tee -a "$conf" >/dev/null
  fi
fi
