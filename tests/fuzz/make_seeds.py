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
