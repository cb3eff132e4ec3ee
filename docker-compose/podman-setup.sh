#!/usr/bin/env bash
# Installs podman, podman-compose and mmdebstrap from Debian and sets what podman needs on
# this kind of machine: `[containers] default_ulimits = []` in containers.conf (the sandbox
# refuses podman's default RLIMIT_NOFILE), and, on a host whose cgroups are in hybrid mode
# (v1 controllers plus a cgroup2 mount with a controller of its own, as /sys/fs/cgroup/unified
# with hugetlb), `[engine] runtime = "runc"`: Debian's crun refuses such a host ("cgroups in
# hybrid mode not supported"), runc runs on it. Idempotent and quick when done.
set -euo pipefail
PACKAGES="podman podman-compose mmdebstrap netavark aardvark-dns"
hybrid=""
# (cgroup files report size 0: read them)
if [ ! -f /sys/fs/cgroup/cgroup.controllers ] && [ -r /sys/fs/cgroup/unified/cgroup.controllers ]; then
  hybrid="$(tr -s ' \n' ' ' < /sys/fs/cgroup/unified/cgroup.controllers)"
  hybrid="${hybrid# }"
  [ -n "$hybrid" ] && PACKAGES="$PACKAGES runc"
fi
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

if [ -n "$hybrid" ] && ! grep -qE '^[[:space:]]*runtime[[:space:]]*=[[:space:]]*"runc"' "$conf"; then
  echo "cgroups in hybrid mode (cgroup2 controllers: ${hybrid% }): setting [engine] runtime = \"runc\" in $conf (crun refuses this host)"
  if grep -qE '^[[:space:]]*runtime[[:space:]]*=' "$conf"; then
    $SUDO sed -i -E 's/^[[:space:]]*runtime[[:space:]]*=.*/runtime = "runc"/' "$conf"
  elif grep -qE '^\[engine\]' "$conf"; then
    $SUDO sed -i -E '0,/^\[engine\]/s//[engine]\nruntime = "runc"/' "$conf"
  else
    printf '\n[engine]\nruntime = "runc"\n' | $SUDO tee -a "$conf" >/dev/null
  fi
fi
