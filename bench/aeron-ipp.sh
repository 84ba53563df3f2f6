#!/bin/sh
# Instructions per datagram of spinlane's Aeron bindings under callgrind, one run per
# path, split into the transport's own share (tr_sendmmsg / tr_poll), the hand-off ring,
# Aeron's receive callback (a counter here) and what the adapter adds.
# Usage: bench/aeron-ipp.sh BUILD_DIR   (needs valgrind; root, for the EAL; a build
# configured with the Aeron tree so that BUILD_DIR/bench/aeron-ipp exists)
set -eu
build=${1:?usage: $0 BUILD_DIR}
bin="$build/bench/aeron-ipp"
[ -x "$bin" ] || { echo "no $bin: configure with -DSPINLANE_AERON_DIR/-DSPINLANE_AERON_BUILD_DIR" >&2; exit 1; }
out=$(mktemp /tmp/sl-aeron-ipp.XXXXXX)
trap 'rm -f "$out"' EXIT
n=64000
printf "%-44s %9s %9s %9s %9s %9s\n" "path ($n datagrams of 32 B)" "total" "transport" "ring" "callback" "adapter"
for f in ipp_send1 ipp_send2 ipp_poll ipp_handoff; do
  valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no --toggle-collect="$f" "$bin" >/dev/null 2>&1
  # callgrind_annotate lists a function once per object and once per inlining file: take
  # the largest inclusive count of each
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null | awk -v f="$f" -v pk="$n" '
    function take(name, v) { if (v > best[name]) best[name] = v }
    { v = $1; gsub(",", "", v); fn = $3; sub(/^.*:/, "", fn) }
    fn == f || fn == "tr_sendmmsg" || fn == "tr_poll" || fn == "on_datagram" || fn == "on_recv" ||
    fn == "spa_ring_push" || fn == "spa_ring_peek" || fn == "spa_ring_pop" { take(fn, v + 0) }
    END {
      name["ipp_send1"] = "send_func, 1 datagram a call"
      name["ipp_send2"] = "send_func, 2 datagrams a call"
      name["ipp_poll"] = "poller_poll, receiver, direct delivery"
      name["ipp_handoff"] = "poller_poll x2, sender datagram via the ring"
      total = best[f]; cb = best["on_recv"]
      ring = best["spa_ring_push"] + best["spa_ring_peek"] + best["spa_ring_pop"]
      # the transport calls back into the adapter (on_datagram): that share belongs to the adapter
      tr = best["tr_sendmmsg"] + best["tr_poll"] - best["on_datagram"]
      printf "%-44s %9.0f %9.0f %9.0f %9.0f %9.0f\n", name[f], total / pk, tr / pk, ring / pk, cb / pk,
             (total - tr - ring - cb) / pk
    }'
done
echo "(Ir per datagram; transport = tr_sendmmsg or tr_poll inclusive, PMD and mempool included; see bench/transport-ipp.sh for its own split)"
