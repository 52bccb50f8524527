"""tfckpt.py -- read TensorFlow's V2 checkpoints (the tensor bundle dgrun
writes, docs/checkpoints.md) without TensorFlow, for the e2e tests: the
LevelDB table of PREFIX.index (block checksums checked), the
BundleHeaderProto and BundleEntryProtos, and the bytes of each entry in
PREFIX.data-00000-of-00001 (their CRC-32C checked when asked: pure Python,
so slow for big files).

  read(prefix, checksum=True) -> (step, {name: (dtype, shape, bytes)})
      (a partitioned variable assembled from its slices under its name)
  entries(prefix) -> [(key bytes, {dtype, shape, slices})] of the index
  slice_key(name, extents) -> TF's key of a slice ([(start, length)])
  names(prefix) -> the files of a bundle
Raises ValueError when the checkpoint is incomplete or damaged.
"""
import os
import struct

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _T.append(_c)


def crc32c(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def unmask(m):
    r = (m - 0xA282EAD8) & 0xFFFFFFFF
    return ((r >> 17) | (r << 15)) & 0xFFFFFFFF


def mask(c):
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(buf, off):
    r = s = 0
    while True:
        if off >= len(buf) or s > 63:
            raise ValueError("bad varint")
        b = buf[off]
        off += 1
        r |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return r, off


def _block(buf, off, size):
    if off + size + 5 > len(buf):
        raise ValueError("truncated block read")
    data = buf[off:off + size]
    (m,) = struct.unpack("<I", buf[off + size + 1:off + size + 5])
    if unmask(m) != crc32c(buf[off:off + size + 1]):
        raise ValueError("block checksum mismatch")
    if buf[off + size] != 0:
        raise ValueError("compressed block")
    return data


def _entries(blk):
    (nr,) = struct.unpack("<I", blk[-4:])
    end = len(blk) - 4 - 4 * nr
    off, key, out = 0, b"", []
    while off < end:
        shared, off = _varint(blk, off)
        ns, off = _varint(blk, off)
        vl, off = _varint(blk, off)
        key = key[:shared] + blk[off:off + ns]
        off += ns
        out.append((key, blk[off:off + vl]))
        off += vl
    return out


def table(buf):
    """Every (key, value) of a LevelDB table file's bytes."""
    if len(buf) < 48 or buf[-8:] != struct.pack("<Q", 0xDB4775248B80FB57):
        raise ValueError("not an sstable (bad magic number)")
    f = buf[-48:]
    _, o = _varint(f, 0)
    _, o = _varint(f, o)
    ioff, o = _varint(f, o)
    isize, o = _varint(f, o)
    out = []
    for _, h in _entries(_block(buf, ioff, isize)):
        off, o = _varint(h, 0)
        size, o = _varint(h, o)
        out += _entries(_block(buf, off, size))
    return out


def _fields(msg):
    """protobuf fields: [(number, value)] (varint ints, bytes, fixed32)."""
    off, out = 0, []
    while off < len(msg):
        tag, off = _varint(msg, off)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, off = _varint(msg, off)
        elif wt == 2:
            n, off = _varint(msg, off)
            v = msg[off:off + n]
            off += n
        elif wt == 5:
            (v,) = struct.unpack("<I", msg[off:off + 4])
            off += 4
        elif wt == 1:
            (v,) = struct.unpack("<Q", msg[off:off + 8])
            off += 8
        else:
            raise ValueError("bad wire type")
        out.append((num, v))
    return out


DTYPES = {1: ("float32", 4), 2: ("float64", 8), 3: ("int32", 4),
          9: ("int64", 8), 10: ("bool", 1)}


def _oc_num(v):
    b = v.to_bytes(8, "big").lstrip(b"\0")
    return bytes([len(b)]) + b


def _oc_signed(v):
    """OrderedCode::WriteSignedNumIncreasing."""
    x = ~v if v < 0 else v
    n = x.bit_length() // 7 + 1
    buf = bytearray(v.to_bytes(10, "big", signed=True)[10 - n:])
    if n <= 8:  # the length as n leading 1 bits
        buf[0] ^= (0xff00 >> n) & 0xff
    else:
        buf[0] ^= 0xff
        buf[1] ^= (0xff00 >> (n - 8)) & 0xff
    return bytes(buf)


def slice_key(name, extents):
    """checkpoint::EncodeTensorNameSlice: extents [(start, length)],
    length -1 for a whole dimension."""
    s = name.encode().replace(b"\xff", b"\xff\x00")
    k = _oc_num(0) + s + b"\x00\x01" + _oc_num(len(extents))
    for st, ln in extents:
        k += _oc_signed(0 if ln < 0 else st) + _oc_signed(ln)
    return k


def _entry(val):
    e = {"dtype": 0, "shape": [], "off": 0, "size": 0, "crc": 0,
         "slices": []}
    for num, v in _fields(val):
        if num == 1:
            e["dtype"] = v
        elif num == 2:
            for n2, d in _fields(v):
                if n2 == 2:
                    e["shape"].append(dict(_fields(d)).get(1, 0))
        elif num == 4:
            e["off"] = v
        elif num == 5:
            e["size"] = v
        elif num == 6:
            e["crc"] = v
        elif num == 7:
            ext = []
            for n2, x in _fields(v):
                if n2 == 1:
                    f = dict(_fields(x))
                    ext.append((f.get(1, 0), f.get(2, -1)))
            e["slices"].append(ext)
    return e


def entries(prefix):
    with open(index_path(prefix), "rb") as f:
        kvs = table(f.read())
    return [(k, _entry(v)) for k, v in kvs[1:]]


def names(prefix):
    return [prefix + ".index", prefix + ".data-00000-of-00001"]


def index_path(prefix):
    """The index a restore reads: PREFIX.index, or the index temporary of a
    killed writer whose data shard was already renamed into place (dgrun
    rolls that save forward: runtime/session/tf_bundle.c)."""
    d, base = os.path.split(prefix)
    tag = base + ".index.tmp."
    for f in os.listdir(d or "."):
        if not f.startswith(tag) or not f[len(tag):].isdigit():
            continue
        pid = int(f[len(tag):])
        try:
            os.kill(pid, 0)
            continue  # still writing
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        if not os.path.exists("%s.data-00000-of-00001.tmp.%d" % (prefix, pid)):
            return os.path.join(d, f)
    return prefix + ".index"


def read(prefix, checksum=True):
    with open(index_path(prefix), "rb") as f:
        kvs = table(f.read())
    if not kvs or kvs[0][0] != b"":
        raise ValueError("no header entry")
    step = None
    for num, v in _fields(kvs[0][1]):
        if num == 4242:
            step = dict(_fields(v)).get(1, 0)
    with open(prefix + ".data-00000-of-00001", "rb") as f:
        data = f.read()
    vals, raw, full = {}, {}, []
    for key, val in kvs[1:]:
        e = _entry(val)
        if e["slices"]:
            full.append((key, e))
            continue
        if e["dtype"] not in DTYPES:  # a dtype dgrun has not (int8...)
            continue
        dt, width = DTYPES[e["dtype"]]
        n = 1
        for d in e["shape"]:
            n *= d
        b = data[e["off"]:e["off"] + e["size"]]
        if len(b) != e["size"] or e["size"] != n * width:
            raise ValueError("entry %s truncated or of the wrong size" % key)
        if checksum and unmask(e["crc"]) != crc32c(b):
            raise ValueError("entry %s: checksum mismatch" % key)
        if key[:1] == b"\0":
            raw[key] = b  # a slice's bytes, under TF's ordered-code key
        else:
            vals[key.decode()] = (dt, e["shape"], b)
    for key, e in full:  # partitioned variables: assembled
        if e["dtype"] not in DTYPES:
            continue
        dt, width = DTYPES[e["dtype"]]
        shape = e["shape"]
        out = bytearray(width * _prod(shape))
        for ext in e["slices"]:
            box = [(0, d) if ln < 0 else (st, ln)
                   for (st, ln), d in zip(ext, shape)]
            b = raw.get(slice_key(key.decode(), ext))
            if b is None:
                raise ValueError("slice %s of %s has no entry" % (ext, key))
            _put(out, shape, box, b, width)
        vals[key.decode()] = (dt, shape, bytes(out))
    if step is None and "global_step" in vals:
        (step,) = struct.unpack("<q", vals["global_step"][2])
    return step, vals


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _put(out, shape, box, b, width):
    """Copy the C-order box b into the C-order full tensor out."""
    lens = [ln for _, ln in box]
    for i in range(_prod(lens[:-1]) if lens else 1):
        idx, r = [], i
        for ln in reversed(lens[:-1]):
            idx.append(r % ln)
            r //= ln
        idx = list(reversed(idx))
        off = 0
        for d, (st, _) in enumerate(box[:-1]):
            off = off * shape[d] + st + idx[d]
        if box:
            off = off * shape[-1] + box[-1][0]
        run = lens[-1] * width if lens else width
        out[off * width:off * width + run] = b[i * run:(i + 1) * run]


def exists(prefix):
    return os.path.exists(index_path(prefix))
