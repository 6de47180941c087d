#!/usr/bin/python3
"""PyTorch DDP peer for perf/studies/peers.py: plain mini-batch SGD on L2-regularized logistic
regression, on the rows of an .npz file (X float32, y in {-1, +1}) that minisgd reads too.

Global batch b split over P processes (gloo on CPUs, one thread each; NCCL with --device cuda,
one GPU each, the rows resident on it); step k uses rows
[k·b, (k+1)·b) as minisgd's row decomposition does. The objective F(w) = mean log(1 +
exp(−y·x·w)) + (λ/2)‖w‖² (no bias; SGD's weight_decay = λ is its gradient) is evaluated in
FP64 every --eval-every steps outside the timed loop; prints one JSON line: samples/s of the
training loop and the training seconds at the first evaluation at or below --target.
--hook picks DDP's communication hook: none, fp16, bf16 or powersgd (rank 1).
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.nn.parallel import DistributedDataParallel as DDP


def objective(X, y, w, lam):
    z = y * (X @ w)
    return float(np.mean(np.logaddexp(0.0, -z)) + 0.5 * lam * (w @ w))


def attach(model, hook):
    if hook == "fp16":
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif hook == "bf16":
        model.register_comm_hook(None, default_hooks.bf16_compress_hook)
    elif hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                            start_powerSGD_iter=2, min_compression_rate=0.0)
        model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)


def worker(rank, a):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(a.port))
    torch.set_num_threads(1)
    gpu = a.device == "cuda"
    if gpu:
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if gpu else "gloo", rank=rank, world_size=a.ranks)
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    data = np.load(a.data)
    X64, y = data["X"].astype(np.float64), data["y"].astype(np.float64)
    X = torch.from_numpy(data["X"]).to(device)
    t = torch.from_numpy((data["y"] > 0).astype(np.float32)).to(device)
    m, d, P, b = X.shape[0], X.shape[1], a.ranks, a.batch
    lo, hi = rank * b // P, (rank + 1) * b // P  # this rank's share of every batch
    model = DDP(torch.nn.Linear(d, 1, bias=False).to(device), device_ids=[rank] if gpu else None)
    with torch.no_grad():
        model.module.weight.zero_()
    attach(model, a.hook)
    opt = torch.optim.SGD(model.parameters(), lr=a.eta, weight_decay=a.l2)
    steps, per_epoch = int(a.epochs * (m // b)), m // b
    seconds, reached, done = 0.0, None, 0
    while done < steps:
        stop = min(done + a.eval_every, steps)
        dist.barrier()
        start = time.perf_counter()
        for k in range(done, stop):
            first = (k % per_epoch) * b
            xb, tb = X[first + lo:first + hi], t[first + lo:first + hi]
            opt.zero_grad(set_to_none=True)
            F.binary_cross_entropy_with_logits(model(xb).squeeze(1), tb).backward()
            opt.step()
        if gpu:
            torch.cuda.synchronize()  # the loop's kernels are queued, not done
        dist.barrier()
        seconds += time.perf_counter() - start
        done = stop
        w = model.module.weight.detach().double().cpu().numpy().ravel()
        loss = objective(X64, y, w, a.l2)
        if reached is None and loss <= a.target:
            reached = seconds
            if a.stop_at_target:
                break
    if rank == 0:
        print(json.dumps({"peer": f"torch-ddp-{'nccl' if gpu else 'gloo'}", "hook": a.hook,
                          "ranks": P, "device": a.device, "torch": torch.__version__, "steps": done,
                          "samples_per_s": done * b / seconds, "final_loss": loss,
                          "time_to_target_s": reached}), flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--eta", type=float, default=0.5)
    p.add_argument("--l2", type=float, default=1e-4)
    p.add_argument("--epochs", type=float, default=1)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--target", type=float, default=-1.0)
    p.add_argument("--stop-at-target", action="store_true")
    p.add_argument("--hook", choices=["none", "fp16", "bf16", "powersgd"], default="none")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--port", type=int, default=29531)
    a = p.parse_args()
    mp.spawn(worker, args=(a,), nprocs=a.ranks, join=True)


if __name__ == "__main__":
    main()
