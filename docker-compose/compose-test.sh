#!/usr/bin/env bash
# The compose topology as a test (make compose-test): start the NameNode and three DataNodes
# of compose.yaml with podman-compose from the image `make compose-image` built, wait until
# they are healthy, run the conformance kit inside the compose network (the `conformance`
# service), kill a datanode-ext inside its container and see the cluster survive it (offload
# again), then `down` and `up` again and find the namespace kept in the volumes. It tears
# everything down at the end, failed or not, and fails if any container, network or volume
# of its project is left.
#
#   compose-test.sh [PROJECT]     (default project: newtricks-test-<pid>, one per run, so
#                                 that runs from two checkouts on one machine never meet)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
P=${1:-newtricks-test-$$}
COMPOSE=(podman-compose -p "$P" -f "$here/compose.yaml")
# Free host ports for the published ones: no clash with another cluster on this machine.
export NEWTRICKS_NAMENODE_WEB_PORT= NEWTRICKS_NAMENODE_RPC_PORT= NEWTRICKS_NAMENODE_API_PORT=
DAEMONS=(namenode datanode1 datanode2 datanode3)
LABEL=io.podman.compose.project=$P
start=$(date +%s)
say() { echo "compose-test [$(( $(date +%s) - start ))s]: $*"; }

# Long commands run in the background and are waited for: a signal then ends the wait at once
# and the EXIT trap tears down (bash runs no trap while a foreground child runs). `<&0` keeps
# the caller's standard input (a background command's is /dev/null otherwise).
bg() { "$@" <&0 & wait $!; }
compose() { bg "${COMPOSE[@]}" "$@" >>"$log" 2>&1; }
container() { echo "${P}_$1_1"; }

# Everything of project $1 (default: this run's), whatever state it is in.
teardown() {
  local p=${1:-$P} label=io.podman.compose.project=${1:-$P}
  podman-compose -p "$p" -f "$here/compose.yaml" down -v -t 10 >>"$log" 2>&1 || true
  podman ps -aq --filter "label=$label" | xargs -r podman rm -f -t 5 >>"$log" 2>&1 || true
  podman volume ls -q --filter "label=$label" | xargs -r podman volume rm -f >>"$log" 2>&1 || true
  podman network ls -q --filter "label=$label" | xargs -r podman network rm -f >>"$log" 2>&1 || true
}

# Projects of earlier runs whose script is gone (killed before its own teardown).
stale() {
  { podman ps -a --format '{{index .Labels "io.podman.compose.project"}}'
    podman volume ls --format '{{index .Labels "io.podman.compose.project"}}'
    podman network ls --format '{{index .Labels "io.podman.compose.project"}}'; } 2>/dev/null |
    grep -E '^newtricks-test-[0-9]+$' | sort -u | while read -r p; do
      kill -0 "${p##*-}" 2>/dev/null || echo "$p"
    done
}

leftovers() {
  local left
  left=$( { podman ps -a --format 'container {{.Names}}' --filter "label=$LABEL"
            podman volume ls --format 'volume {{.Name}}' --filter "label=$LABEL"
            podman network ls --format 'network {{.Name}}' --filter "label=$LABEL"; } 2>&1)
  if [ -n "$left" ]; then
    echo "compose-test: left behind by project $P:" >&2
    echo "$left" >&2
    return 1
  fi
}

# On failure: each daemon's state and the end of its log, named.
dump() {
  echo "compose-test: FAILED; the containers of project $P:" >&2
  podman ps -a --filter "label=$LABEL" --format '  {{.Names}}  {{.Status}}' >&2 || true
  for d in "${DAEMONS[@]}"; do
    c=$(container "$d")
    echo "==> $c: $(podman inspect -f '{{.State.Status}} (exit {{.State.ExitCode}}, restarts {{.RestartCount}})' "$c" 2>&1) <==" >&2
    podman logs --tail 40 "$c" 2>&1 | sed 's/^/    /' >&2 || true
    podman exec "$c" sh -c 'tail -n 20 /data/tmp/newtricks/*.log /var/log/hadoop/*ext*.log 2>/dev/null' 2>/dev/null | sed 's/^/    /' >&2 || true
  done
  echo "==> podman-compose output: $log <==" >&2
  tail -n 40 "$log" | sed 's/^/    /' >&2
}

log=$(mktemp /tmp/newtricks-compose-test.XXXXXX.log)
finish() {
  rc=$?
  trap - EXIT INT TERM
  [ "$rc" = 0 ] || dump
  say "tearing down"
  teardown
  leftovers || rc=1
  [ "$rc" = 0 ] && rm -f "$log"
  say "done (exit $rc)"
  exit "$rc"
}
trap finish EXIT
trap 'echo "compose-test: interrupted" >&2; exit 130' INT TERM

for p in $(stale); do say "removing $p, left by a run that was killed"; teardown "$p"; done
podman image exists newtricks/hdfs:dev || { echo "compose-test: no image newtricks/hdfs:dev: run make compose-image" >&2; exit 1; }

# The kit inside the compose network: the one-off `conformance` service (no deps: they run).
# Detached and named, since podman-compose 1.0's `run` does not return the container's exit
# status; its output is followed to the end, then the status is the kit's.
runs=0
kit() {
  runs=$((runs + 1))
  local name="${P}_kit_$runs" rc
  compose run -d -T --no-deps --name "$name" conformance conformance --datanodes 3 "$@"
  podman container exists "$name" || { echo "compose-test: the conformance service did not start ($name)" >&2; return 1; }
  bg podman logs -f "$name" || true
  rc=$(podman wait "$name")
  podman rm -f "$name" >/dev/null 2>&1 || true
  return "$rc"
}
up() {
  say "up: ${DAEMONS[*]}"
  compose up -d "${DAEMONS[@]}"
  for d in "${DAEMONS[@]}"; do
    podman container exists "$(container "$d")" || { echo "compose-test: container $(container "$d") was not created" >&2; return 1; }
  done
  say "waiting for the cluster to be healthy (up to 5m)"
  kit --wait-only --wait 5m
}
# Hadoop's own shell in the NameNode's container, as the superuser (root there).
fsshell() { bg podman exec -i "$(container namenode)" java -cp '/opt/newtricks/conf/namenode:/opt/hadoop/lib/*' org.apache.hadoop.fs.FsShell "$@"; }
dnext_pid() { podman exec "$(container datanode1)" pgrep -x datanode-ext || true; }

up
say "conformance kit"
kit

say "kill -9 datanode-ext in $(container datanode1)"
old=$(dnext_pid)
[ -n "$old" ] || { echo "compose-test: no datanode-ext process in $(container datanode1)" >&2; exit 1; }
podman exec "$(container datanode1)" kill -9 "$old"
for i in $(seq 1 120); do
  new=$(dnext_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] && break
  sleep 1
done
[ -n "$new" ] && [ "$new" != "$old" ] || { echo "compose-test: the DataNode's hook did not restart datanode-ext within 120s (old pid $old)" >&2; exit 1; }
say "datanode-ext restarted by its hook (pid $old -> $new); offload again"
kit --wait 2m --run 'offload|doctor'

say "the namespace across down and up"
marker="/compose-test-$$"
echo "kept across down/up $$" | fsshell -put - "$marker" 2>>"$log"
compose down -t 10
podman volume ls -q --filter "label=$LABEL" | grep -q namenode || { echo "compose-test: down removed the volumes" >&2; exit 1; }
up
got=$(fsshell -cat "$marker" </dev/null 2>>"$log")
[ "$got" = "kept across down/up $$" ] || { echo "compose-test: $marker after down/up: got '$got'" >&2; exit 1; }
fsshell -rm -skipTrash "$marker" >>"$log" 2>&1
say "namespace kept across down/up"
