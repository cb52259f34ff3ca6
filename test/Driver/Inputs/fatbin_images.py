"""fatbin_images.py FILE.ll SYMBOL: lists the images of the CUDA fat binary
that FILE.ll (seqc --emit=llvm-ir) embeds as @SYMBOL, one line each:
'<ptx|elf> sm_<NN>'. The format: a 16-byte header (magic 0xBA55ED50,
version, header size, payload size), then entries of a header (kind 1: PTX,
2: ELF; its size; the payload's size; the architecture at byte 28) and a
payload."""
import re
import struct
import sys

text = open(sys.argv[1]).read()
m = re.search(r"@%s = internal constant \[(\d+) x i8\] c\"(.*?)\", align" % sys.argv[2],
              text, re.S)
if not m:
    sys.exit(f"no constant @{sys.argv[2]} in {sys.argv[1]}")
raw, i, data = m.group(2), 0, bytearray()
while i < len(raw):
    if raw[i] == "\\" and raw[i + 1] == "\\":
        data.append(0x5C)
        i += 2
    elif raw[i] == "\\":
        data.append(int(raw[i + 1:i + 3], 16))
        i += 3
    else:
        data.append(ord(raw[i]))
        i += 1
if len(data) != int(m.group(1)):
    sys.exit("the constant's size does not match its text")
magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
if magic != 0xBA55ED50:
    sys.exit(f"not a fat binary (magic {magic:#x})")
offset, end = header, header + size
while offset < end:
    kind, _, entry, payload = struct.unpack_from("<HHIQ", data, offset)
    arch = struct.unpack_from("<I", data, offset + 28)[0]
    print({1: "ptx", 2: "elf"}.get(kind, f"kind{kind}"), f"sm_{arch}")
    offset += entry + payload
