"""ir_manifest.py FILE.ll: prints the text of the @seqc_manifest constant that
FILE.ll (seqc --emit=llvm-ir) defines, without its NUL, and a newline: what
`seqc --emit=manifest` prints for the same model and flags."""
import re
import sys

text = open(sys.argv[1]).read()
m = re.search(r"^@seqc_manifest = [^\n]*?constant \[(\d+) x i8\] c\"(.*?)\"",
              text, re.M | re.S)
if not m:
    sys.exit(f"no constant @seqc_manifest in {sys.argv[1]}")
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
if len(data) != int(m.group(1)) or data[-1] != 0:
    sys.exit("the constant is not a NUL-terminated string of its size")
sys.stdout.write(data[:-1].decode() + "\n")
