#!/usr/bin/python3
"""make_seeds.py -- (re)write the hand-made seed inputs in tests/fuzz/corpus.

Seeds taken as they are from graphs/ and tests/data/ are not copied: run.sh
passes those directories to libFuzzer.  Crashing inputs found by fuzzing are
committed next to these seeds under names starting with "crash-"; this
script never touches them.  Run with /usr/bin/python3 (needs numpy).
"""
import io
import os
import struct

import numpy as np

C = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')


def w(d, name, data):
    os.makedirs(f'{C}/{d}', exist_ok=True)
    with open(f'{C}/{d}/{name}', 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy(a, fortran=False):
    b = io.BytesIO()
    np.save(b, np.asfortranarray(a) if fortran else a)
    return b.getvalue()


for i, s in enumerate(['/job:localhost/replica:0/task:0/device:GPU:0', '/gpu:1', '/cpu:0',
                       'GPU:0', '/device:CPU:*', '/job:worker/task:1', '/replica:0/device:TPU:3',
                       '', '/device:gpu:0', 'CPU', '/job:localhost/device:XLA_GPU:2']):
    w('devspec', f'seed{i}', s)

w('rules', 'array.json', '[{"match": {"op": ["Variable", "VariableV2"]}, "device": "/cpu:0"},\n'
  ' {"match": {"name": "tower_*/w"}, "strategy": "round_robin", "devices": ["/gpu:0", "/gpu:1"]}]\n')
w('rules', 'object.json', '{"rules": [{"match": {"name": "*"}, "device": "/device:GPU:0"}]}\n')
w('rules', 'null_match.json', '[{"match": null, "device": "/cpu:0"}]')

w('csv', 'matrix.csv', '1,2,3\n4,5,6\n')
w('csv', 'floats.csv', '1.5, -2e3\r\n nan, inf\r\n')
w('csv', 'scalar.csv', '42\n')
w('csv', 'ints.csv', '9223372036854775807,-9223372036854775808\n0,1\n')

w('npy', 'f4.npy', npy(np.arange(6, dtype='<f4').reshape(2, 3)))
w('npy', 'f8_fortran.npy', npy(np.arange(6, dtype='<f8').reshape(2, 3), True))
w('npy', 'i4.npy', npy(np.array([1, -2, 3], dtype='<i4')))
w('npy', 'i8.npy', npy(np.array([[1], [2]], dtype='<i8')))
w('npy', 'b1.npy', npy(np.array([True, False])))
w('npy', 'u1.npy', npy(np.array([1, 255], dtype='u1')))
w('npy', 'i2_scalar.npy', npy(np.array(7, dtype='<i2')))
w('npy', 'u4_3d.npy', npy(np.zeros((1, 2, 2), dtype='<u4')))
w('npy', 'nan_inf.npy', npy(np.array([np.nan, np.inf, -np.inf, 1e300], dtype='<f8')))
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
h = h + b' ' * (64 - (12 + len(h) + 1) % 64) + b'\n'
w('npy', 'v2.npy', b'\x93NUMPY\x02\x00' + struct.pack('<I', len(h)) + h + struct.pack('<2f', 1, 2))

# args: argv[1..] separated by NUL bytes
for i, a in enumerate([
        ['run', 'g.json', '--fetch', 'a,b', '--feed', 'x=f.npy', '--repeat', '3'],
        ['train', 'g.json', '--steps=10', '--checkpoint', 'ck', '--restore', '--seed', '7'],
        ['place', '-', '--assume-gpus', '2', '--format', 'dot', '-o', 'out', '--explain', 'n'],
        ['profile', 'g.json', '--trace', 't.json', '--train', '--inter-op-threads', '2',
         '--intra-op-threads=1'],
        ['check', 'g.json', '--device', '/gpu:0', '--allow-soft-placement', '--no-colocate',
         '--placement', 'r.json'],
        ['devices', '--opencl-devices', 'all', '--visible-devices', '0,1', '--virtual-gpus', '2',
         '--gpu-memory-fraction', '0.5', '--no-allow-growth', '--json'],
        ['run', 'g.json', '--memory', '--log-device-placement', '--', '-x'],
        ['ops'], ['--version'], ['run', '--help'], ['place', 'g.json', '--expect', 'gold.json']]):
    w('args', f'seed{i}', '\0'.join(a))


# ---- tf_index: TensorFlow checkpoint indexes (fuzz_tf_index.c) -------------
# TF's own files (tests/data/tf_ckpt), and indexes for the harness's graph
# whose entries point into its data shard (bytes i*31+7), checksums right,
# so that a restore gets as far as the Variables.
def _crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def _mask(c):
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(v):
    out = b''
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def _block(entries, interval=16):
    buf, restarts, last = b'', [], b''
    for i, (k, v) in enumerate(entries):
        shared = 0
        if i % interval == 0:
            restarts.append(len(buf))
        else:
            while shared < min(len(k), len(last)) and k[shared] == last[shared]:
                shared += 1
        buf += _varint(shared) + _varint(len(k) - shared) + _varint(len(v)) + k[shared:] + v
        last = k
    if not restarts:
        restarts = [0]
    return buf + b''.join(struct.pack('<I', r) for r in restarts) + struct.pack('<I', len(restarts))


def _table(entries):
    out = b''

    def put(blk):
        nonlocal out
        off = len(out)
        out += blk + b'\0' + struct.pack('<I', _mask(_crc32c(blk + b'\0')))
        return _varint(off) + _varint(len(blk))
    data_h = put(_block(entries))
    meta_h = put(_block([]))
    index_h = put(_block([(entries[-1][0], data_h)], 1))
    foot = meta_h + index_h
    return out + foot + b'\0' * (40 - len(foot)) + struct.pack('<Q', 0xDB4775248B80FB57)


def _entry(dtype, shape, off, size):
    shard = bytes((i * 31 + 7) & 0xFF for i in range(4096))
    dims = b''.join(b'\x12' + _varint(len(_varint(d))+1) + b'\x08' + _varint(d) for d in shape)
    msg = b'\x08' + _varint(dtype) + b'\x12' + _varint(len(dims)) + dims
    if off:
        msg += b'\x20' + _varint(off)
    if size:
        msg += b'\x28' + _varint(size)
    return msg + b'\x35' + struct.pack('<I', _mask(_crc32c(shard[off:off + size])))


_HEADER = b'\x08\x01\x1a\x02\x08\x01'
_good = [(b'', _HEADER),
         (b'flag', _entry(10, [2], 100, 2)),
         (b'global_step', _entry(9, [], 16, 8)),
         (b'w', _entry(1, [2, 3], 24, 24)),
         (b'w/Adam', _entry(1, [2, 3], 48, 24))]
w('tf_index', 'dgrun_graph.index', _table(_good))
w('tf_index', 'dgrun_graph_step.index', _table([(b'', _HEADER + b'\x92\x89\x02\x02\x08\x07')] + _good[1:]))
w('tf_index', 'wrong_shape.index', _table(_good[:3] + [(b'w', _entry(1, [3, 2], 24, 24))] + _good[4:]))
w('tf_index', 'wrong_dtype.index', _table(_good[:2] + [(b'global_step', _entry(3, [], 16, 4))] + _good[3:]))
w('tf_index', 'missing.index', _table(_good[:4]))
w('tf_index', 'past_shard.index', _table(_good[:3] + [(b'w', _entry(1, [2, 3], 4090, 24))] + _good[4:]))
for name in ('types/model.ckpt.index', 'mlp/model.ckpt-3.index'):
    with open(os.path.join(C, '..', '..', 'data', 'tf_ckpt', name), 'rb') as f:
        w('tf_index', 'tf_' + name.split('/')[0] + '.index', f.read())
