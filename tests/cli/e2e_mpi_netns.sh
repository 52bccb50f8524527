#!/usr/bin/env bash
# e2e_mpi_netns.sh -- a 3-task cluster across three network namespaces
# (SPEC 8.3, issue 12 item 7): every task runs in its own namespace with
# its own hostname, linked to the others by veth pairs on a bridge (in a
# fourth namespace), so the traffic crosses a real network stack: Open
# MPI's TCP transport (btl tcp), launched by an rsh agent that enters the
# namespace (`ip netns exec`) instead of ssh.  Checks the values, that the
# ranks ran in three namespaces, and that the veth links carried the bytes.
#
# Usage: e2e_mpi_netns.sh DGRUN
# Exit 0 pass, 1 fail, 77 skipped (no mpirun, or no permission to create
# network namespaces, e.g. an unprivileged container).
set -u
DGRUN=$(readlink -f "$1")
ROOT=${DGRUN_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SMALL=$ROOT/tests/data/cluster/small.json
XCSV=$ROOT/tests/data/cluster/x.csv
TAG=dg$$
HUB=${TAG}hub
NET=10.77.$(( $$ % 200 + 20 ))
TMP=$(mktemp -d /tmp/dgrun-netns-XXXXXX)

skip() { echo "SKIP: $*"; exit 77; }
command -v mpirun >/dev/null || skip "mpirun not found (install openmpi-bin)"
command -v ip >/dev/null || skip "ip not found (install iproute2)"
command -v unshare >/dev/null || skip "unshare not found (util-linux)"

cleanup() {
    for k in 0 1 2; do ip netns del ${TAG}n$k 2>/dev/null; done
    ip netns del $HUB 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add $HUB 2>/dev/null ||
    skip "cannot create network namespaces here (needs CAP_SYS_ADMIN: root outside an unprivileged container)"

set -e
ip -n $HUB link add br0 type bridge
ip -n $HUB link set br0 up
for k in 0 1 2; do
    ns=${TAG}n$k
    ip netns add $ns
    ip link add ${TAG}v$k type veth peer name ${TAG}b$k
    ip link set ${TAG}v$k netns $ns
    ip link set ${TAG}b$k netns $HUB
    ip -n $HUB link set ${TAG}b$k master br0 up
    ip -n $ns link set lo up
    ip -n $ns addr add $NET.$((k + 1))/24 dev ${TAG}v$k
    ip -n $ns link set ${TAG}v$k up
    echo "$NET.$((k + 1)) slots=1" >> "$TMP/hosts"
done
# the rsh agent: "agent HOST CMD..." runs CMD in HOST's namespace, with a
# hostname of its own (Open MPI tells nodes apart by name)
cat > "$TMP/agent.sh" <<EOF
#!/bin/sh
host=\$1; shift
k=\$(( \${host##*.} - 1 ))
exec ip netns exec ${TAG}n\$k unshare --uts sh -c "hostname node\$k; \$*"
EOF
chmod +x "$TMP/agent.sh"
set +e

fail=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# under AddressSanitizer: no leak checks (Open MPI's plugins; e2e_mpi.py)
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
MPI=(mpirun --allow-run-as-root --hostfile "$TMP/hosts" -np 3 --map-by node
     --mca plm_rsh_agent "$TMP/agent.sh" --mca btl tcp,self
     --mca btl_tcp_if_include $NET.0/24 --mca oob_tcp_if_include $NET.0/24)
# mpirun itself in task 0's namespace
run0() { timeout "$1" ip netns exec ${TAG}n0 unshare --uts sh -c 'hostname node0; exec "$@"' sh "${@:2}"; }

out=$(cd "$TMP" && run0 120 "${MPI[@]}" "$DGRUN" run "$SMALL" \
      --opencl-devices none --feed "x=$XCSV" --repeat 2 --json 2>"$TMP/err")
rc=$?
want='"c": {"dtype": "float32", "shape": [3], "value": [12.0, 14.0, 16.0]}'
if [ $rc -ne 0 ] || [[ "$out" != *"$want"* ]] ||
   [[ "$out" != *'"d": {"dtype": "float32", "shape": [3], "value": [3.0, 4.0, 5.0]}'* ]] ||
   [[ "$out" != *'"big_sum": {"dtype": "float32", "shape": [], "value": 25000.0}'* ]]; then
    echo "FAIL: run across three namespaces (exit $rc)"
    echo "$out"; cat "$TMP/err"; fail=1
fi
# each rank in its own namespace: the hosts MPI saw
# (stdout only, host names only: mpirun's rsh launcher may warn on stderr,
# e.g. "plm:rsh: Warning: setpgid(...) failed" when a child has already
# exec'd under load -- a race in Open MPI, harmless, and not a host name)
hosts=$(cd "$TMP" && run0 60 "${MPI[@]}" hostname 2>"$TMP/err_hosts" |
        grep -E '^node[0-9]+$' | sort | tr '\n' ' ')
if [ "$hosts" != "node0 node1 node2 " ]; then
    echo "FAIL: ranks not in three namespaces: $hosts"; cat "$TMP/err_hosts"; fail=1
fi
# the cluster's bytes crossed the veth links of task 2 (worker:1): the
# 200 KB Variable 'big' twice, at least
bytes=$(ip -n ${TAG}n2 -s -j link show ${TAG}v2 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])' 2>/dev/null)
if [ -z "$bytes" ] || [ "$bytes" -lt 400000 ]; then
    echo "FAIL: veth of worker:1 received ${bytes:-?} bytes, expected > 400000"; fail=1
fi
# an error on one rank across the network: its task named, job exit code
out=$(cd "$TMP" && run0 120 "${MPI[@]}" "$DGRUN" run "$SMALL" \
      --opencl-devices none --feed "x=/nonexistent.csv" 2>&1)
rc=$?
if [ $rc -ne 2 ] || [[ "$out" != *"dgrun: error: [/job:worker/task:1] "* ]]; then
    echo "FAIL: an error on worker:1 across namespaces (exit $rc)"; echo "$out"; fail=1
fi
[ $fail -eq 0 ] && echo ok
exit $fail
