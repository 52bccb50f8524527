#!/usr/bin/python3
"""bench_train.py -- training throughput of the digits MLP (64-128-10, Relu,
softmax cross entropy, Adam, batch 64) on CPU:0: dgrun vs PyTorch, with 1 and
2 threads each.  Prints steps/s for both and the ratio dgrun / PyTorch.

    /usr/bin/python3 bench/bench_train.py [path/to/dgrun] [--steps N]

dgrun's per-step time is (t(N + 50 steps) - t(50 steps)) / N, so process
start, compilation, data loading and the final eval are not counted.
Needs python3-torch and python3-numpy (Debian); installs them if missing.
"""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPH = os.path.join(ROOT, "graphs", "digits_mlp.json")
DATA = os.path.join(ROOT, "graphs", "data")


def ensure_torch():
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        subprocess.check_call(["apt-get", "install", "-y", "python3-torch",
                               "python3-numpy"],
                              env=dict(os.environ,
                                       DEBIAN_FRONTEND="noninteractive"))


def run_dgrun(dgrun, steps, threads):
    cmd = [dgrun, "train", GRAPH, "--steps", str(steps), "--json",
           "--opencl-devices", "none",
           "--inter-op-threads", str(threads),
           "--intra-op-threads", str(threads)]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def dgrun_steps_per_s(dgrun, steps, threads):
    base = min(run_dgrun(dgrun, 50, threads) for _ in range(2))
    full = min(run_dgrun(dgrun, 50 + steps, threads) for _ in range(2))
    return steps / max(full - base, 1e-9)


def torch_steps_per_s(steps, threads):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.from_numpy(np.load(os.path.join(DATA, "digits_train_x.npy")))
    y = torch.from_numpy(np.load(os.path.join(DATA, "digits_train_y.npy")))
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    n = x.shape[0]
    g = torch.Generator().manual_seed(0)

    def run(k):
        perm = torch.randperm(n, generator=g)
        pos = 0
        for _ in range(k):
            if pos + 64 > n:
                perm = torch.randperm(n, generator=g)
                pos = 0
            idx = perm[pos:pos + 64]
            pos += 64
            opt.zero_grad()
            logits = model(x[idx])
            loss = torch.sum(-y[idx] * torch.log_softmax(logits, 1), 1).mean()
            loss.backward()
            opt.step()
        return float(loss)

    run(50)  # warm up
    t0 = time.perf_counter()
    run(steps)
    return steps / (time.perf_counter() - t0)


def main():
    args = sys.argv[1:]
    steps = 1000
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    dgrun = args[0] if args else os.path.join(ROOT, "build", "cli", "dgrun")
    ensure_torch()
    print("digits MLP 64-128-10, Adam, batch 64, %d steps, CPU" % steps)
    for threads in (1, 2):
        d = dgrun_steps_per_s(dgrun, steps, threads)
        t = torch_steps_per_s(steps, threads)
        print("threads=%d  dgrun %8.1f steps/s  pytorch %8.1f steps/s  "
              "dgrun/pytorch %.2f" % (threads, d, t, d / t))


if __name__ == "__main__":
    main()
