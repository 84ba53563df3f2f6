#!/bin/sh
# Instructions per packet of the transport's RX and TX paths under callgrind, beside the
# same paths with no stack (the raw arm of transport-bench).
# on a net_ring port, then on net_memif (see below).
# Usage: bench/transport-ipp.sh BUILD_DIR   (needs valgrind; root, for the EAL)
set -eu
build=${1:?usage: $0 BUILD_DIR}
out=$(mktemp -t sl-tr-ipp.XXXXXX)
raw=$(mktemp -t sl-tr-ipp-raw.XXXXXX)
trap 'rm -f "$out" "$raw"' EXIT
# two runs, so that each one's PMD, mempool and mbuf-free costs are its own
valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
  --toggle-collect=ipp_rx --toggle-collect=ipp_tx --toggle-collect=ipp_pure_rx \
  --toggle-collect=ipp_pure_rx_offload --toggle-collect=ipp_pure_tx \
  --toggle-collect=ipp_pure_rx_fast --toggle-collect=ipp_pure_tx_tmpl \
  "$build/bench/transport-ipp" >/dev/null 2>&1
valgrind --tool=callgrind --callgrind-out-file="$raw" --collect-atstart=no \
  --toggle-collect=ipp_raw_rx --toggle-collect=ipp_raw_tx \
  "$build/bench/transport-ipp" >/dev/null 2>&1
{ callgrind_annotate --inclusive=yes --threshold=100 "$out"; echo "SELF"; \
  callgrind_annotate --threshold=100 "$out"; echo "RAW"; \
  callgrind_annotate --inclusive=yes --threshold=100 "$raw"; } 2>/dev/null | awk -v pk=64000 '
  $0 == "SELF" { self = 1; next }
  $0 == "RAW" { self = 0; rawrun = 1; next }
  { n = $1; gsub(",", "", n) }
  rawrun && $0 ~ /:ipp_raw_rx \[/ { rrx = n }
  rawrun && $0 ~ /:ipp_raw_tx \[/ { rtx = n }
  rawrun { next }
  !self && $0 ~ /:ipp_rx \[/ { rx = n }
  !self && $0 ~ /:ipp_tx \[/ { tx = n }
  !self && $0 ~ /:ipp_pure_rx \[/ { prx = n }
  !self && $0 ~ /:ipp_pure_rx_offload \[/ { pro = n }
  !self && $0 ~ /:ipp_pure_tx \[/ { ptx = n }
  !self && $0 ~ /:ipp_pure_rx_fast \[/ { prf = n }
  !self && $0 ~ /:ipp_pure_tx_tmpl \[/ { ptt = n }
  self && $0 ~ /librte_net_ring/ && $0 !~ /=>/ { ring += n }
  self && $0 ~ /librte_mempool_ring/ && $0 !~ /=>/ { mp += n }
  END {
    printf "%-52s %9s\n", "path (64000 datagrams of 32 B, bursts of 32)", "Ir/packet"
    printf "%-52s %9.0f\n", "RX raw: rx_burst + mbuf free, no stack", rrx / pk
    printf "%-52s %9.0f\n", "RX tr_poll, everything", rx / pk
    printf "%-52s %9.0f\n", "RX what the stack adds (tr_poll - raw)", (rx - rrx) / pk
    printf "%-52s %9.0f\n", "TX raw: alloc + copy a frame + tx_burst, no stack", rtx / pk
    printf "%-52s %9.0f\n", "TX tr_sendmmsg, everything", tx / pk
    printf "%-52s %9.0f\n", "TX what the stack adds (tr_sendmmsg - raw)", (tx - rtx) / pk
    printf "%-52s %9.0f\n", "RX + TX minus PMD rx/tx and mempool ring ops", (rx + tx) / pk - ring / pk - mp / pk
    printf "%-52s %9.0f\n", "RX inline parse + demux (data path), sw checksums", prf / pk
    printf "%-52s %9.0f\n", "RX parse + demux (pure), software checksums", prx / pk
    printf "%-52s %9.0f\n", "RX parse + demux (pure), checksums offloaded", pro / pk
    printf "%-52s %9.0f\n", "TX header template + payload (data path), sw checksums", ptt / pk
    printf "%-52s %9.0f\n", "TX header build (pure), software checksums", ptx / pk
    printf "(net_ring PMD rx+tx %.0f, mempool ring ops %.0f Ir/packet)\n", ring / pk, mp / pk
  }'
# The same four data paths on a net_memif link (the link of transport-bench), the PMD's
# copies included; the peer runs at full speed, outside callgrind. With the product's
# defaults, then with no_udp_csum at both ends (UDP checksum 0: not summed on TX, not
# verified on RX).
for opt in "" --no-udp-csum; do
  valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
    --toggle-collect=ipp_rx --toggle-collect=ipp_tx --toggle-collect=ipp_raw_rx \
    --toggle-collect=ipp_raw_tx "$build/bench/transport-ipp" --memif $opt 2>/dev/null | sed 's/^/# /'
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null | awk -v pk=65536 -v opt="$opt" '
    { n = $1; gsub(",", "", n) }
    $0 ~ /:ipp_rx \[/ { rx = n }
    $0 ~ /:ipp_tx \[/ { tx = n }
    $0 ~ /:ipp_raw_rx \[/ { rrx = n }
    $0 ~ /:ipp_raw_tx \[/ { rtx = n }
    END {
      printf "%-52s %9s\n", "memif " (opt == "" ? "(defaults)" : opt) ", 65536 datagrams of 32 B", "Ir/packet"
      printf "%-52s %9.0f\n", "RX raw: rx_burst + mbuf free", rrx / pk
      printf "%-52s %9.0f   raw/stack %.2f\n", "RX tr_poll, everything", rx / pk, rrx / rx
      printf "%-52s %9.0f\n", "TX raw: alloc + copy a frame + tx_burst", rtx / pk
      printf "%-52s %9.0f   raw/stack %.2f\n", "TX tr_sendmmsg, everything", tx / pk, rtx / tx
    }'
done
