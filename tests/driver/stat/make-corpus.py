#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the fuzz corpus of the CnC parser (corpus/cnc/): small CnC files in Aeron's layout
# (cnc-build.h's), each under libFuzzer's 4096-byte max_len: a good file with every kind of
# counter the renderer knows, one still being created, one of another version, a truncated
# one. Run once by hand; the files are committed.
import os
import struct
import sys

HDR, META, VAL, RING = 128, 512, 128, 64


def cnc(counters, n=4, version=0x200):
    meta = HDR + 2 * RING
    values = meta + n * META
    buf = bytearray(values + n * VAL + RING)
    struct.pack_into("<iiiiiiqqqi", buf, 0, version, RING, RING, n * META, n * VAL, RING,
                     10**10, 1764800000123, 4242, 4096)
    for i, (type_id, key, label, value) in enumerate(counters):
        m, v = meta + i * META, values + i * VAL
        struct.pack_into("<ii", buf, m, 1, type_id)
        buf[m + 16:m + 16 + len(key)] = key
        lb = label.encode()
        struct.pack_into("<i", buf, m + 128, len(lb))
        buf[m + 132:m + 132 + len(lb)] = lb
        struct.pack_into("<qq", buf, v, value, i)
    return bytes(buf)


def stream(type_id, name, reg, session, stream_id, channel, suffix, value):
    key = struct.pack("<qiii", reg, session, stream_id, len(channel)) + channel.encode()
    return (type_id, key, "%s: %d %d %d %s%s" % (name, reg, session, stream_id, channel, suffix), value)


ch = "aeron:udp?endpoint=10.9.0.2:40456"
files = {
    "system": cnc([(0, struct.pack("<i", 0), "Bytes sent", 5), (0, struct.pack("<i", 5), "NAKs sent", 2),
                   (0, struct.pack("<i", 77), "New \"one\"\n", 1), (11, b"", "client-heartbeat: id=5", 9)]),
    "streams": cnc([stream(12, "pub-pos (sampled)", 11, 7, 1001, ch, "", 900), stream(2, "snd-pos", 11, 7, 1001, ch, "", 800),
                    stream(3, "rcv-hwm", 21, 7, 1001, ch, "", 700), stream(4, "sub-pos", 31, 7, 1001, ch, " @0", 600)]),
    "spinlane": cnc([(4200, struct.pack("<ii", 0, 0), "spinlane rx frames: net_memif0 10.9.0.1/24", 3),
                     (4203, struct.pack("<ii", 0, 19), "spinlane drop udp_checksum: net_memif0 10.9.0.1/24", 1),
                     (4204, struct.pack("<ii", 100, 0), "spinlane sender hand-off out", 4),
                     (4204, struct.pack("<ii", 101, 5), "spinlane receiver lcore id", -1)]),
    "starting": cnc([], version=0),
    "version": cnc([(0, struct.pack("<i", 0), "Bytes sent", 5)], version=0x10000),
}
files["truncated"] = files["streams"][:1500]
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "cnc")
os.makedirs(out, exist_ok=True)
for name, data in files.items():
    assert len(data) <= 4096, name
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
