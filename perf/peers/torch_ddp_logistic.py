#!/usr/bin/python3
"""PyTorch DDP peer of minisgd's row-decomposition SGD (perf/peers/compare_torch.sh).

Synthetic logistic regression, m rows x d features in fp32, global batch b split over P
processes (gloo, CPU, one thread each), plain SGD, one epoch. Prints the training rate in
samples/s (data generation excluded), as minisgd's FOM line does. Uses only Debian's
python3-torch; a peer for comparison, never run in CI.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    m, d, P = args.rows, args.features, args.ranks
    local_rows, local_batch = m // P, args.batch // P
    gen = torch.Generator().manual_seed(args.seed + rank)
    X = torch.randn(local_rows, d, generator=gen) / d ** 0.5
    w_star = torch.randn(d, generator=torch.Generator().manual_seed(args.seed))
    y = (torch.rand(local_rows, generator=gen) < torch.sigmoid(X @ w_star)).float()
    model = DDP(torch.nn.Linear(d, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.eta)
    steps = local_rows // local_batch
    dist.barrier()
    start = time.perf_counter()
    for k in range(steps):
        xb, yb = X[k * local_batch:(k + 1) * local_batch], y[k * local_batch:(k + 1) * local_batch]
        opt.zero_grad(set_to_none=True)
        F.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb).backward()
        opt.step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(f"torch {torch.__version__} DDP gloo P={P} m={m} d={d} b={args.batch}: "
              f"{steps * args.batch / seconds:.6e} samples/s ({seconds:.3f} s)")
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--features", type=int, default=2000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--eta", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=1, help="intra-op threads per process")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--port", type=int, default=29517)
    args = p.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
