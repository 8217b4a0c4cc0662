#!/usr/bin/env python3
"""PyTorch's side of the burn-train comparison: the same model,
batch size, optimiser and data as apps/burn-train, timed per epoch.

Model (burn-train's default, apps/burn-train/model.hpp):
  conv 3x3 1->32 (padding 1, no bias) - batch-norm - relu - max-pool 2x2
  conv 3x3 32->64 (padding 1, no bias) - batch-norm - relu - max-pool 2x2
  flatten (64*7*7) - linear 3136->128 - relu - dropout 0.25 - linear 128->10
Loss: cross-entropy on logits. Optimiser: Adam (lr 1e-3, betas 0.9/0.999,
eps 1e-5 as Burn's default, which burn-train uses), learning rate annealed to 0
over the run with a per-batch cosine schedule (--lr-schedule constant: none).
Pixels are scaled to [0, 1]
(no mean/std normalisation), as burn::data::MnistBatcher does.

The images are read from the IDX files into one tensor up front and each batch
is an index_select of a per-epoch permutation: the cheapest way PyTorch can
feed the model, so the baseline is not slowed by a DataLoader. The epoch time
is the training pass only (forward, backward, optimiser step over every
batch), as wall time (train_s) and process CPU time (train_cpu_s: with one
thread, a figure that other load on the machine barely changes); the test
pass is timed separately.

Prints one line per epoch and, with --json, one JSON object at the end:
  {"meta": {...}, "epochs": [{"epoch", "train_s", "train_cpu_s", "train_items", "test_s",
   "train_loss", "train_acc", "test_loss", "test_acc"}], "final_test_acc": x}
Usage: fashion_mnist_torch.py [--epochs 5] [--batch-size 64] [--lr 1e-3]
       [--lr-schedule cosine|constant] [--threads 2] [--seed 42] [--limit-batches N] [--data-dir DIR]
       [--compile] [--json]
(--compile: the model through torch.compile; the first epoch then includes
the compilation.)
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (gzip or not) as a numpy array of uint8."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise SystemExit(f"fashion_mnist_torch.py: '{path}' is not an IDX file of unsigned bytes")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def locate(data_dir, name):
    for candidate in (os.path.join(data_dir, name + ".gz"), os.path.join(data_dir, name)):
        if os.path.exists(candidate):
            return candidate
    raise SystemExit(f"fashion_mnist_torch.py: '{name}[.gz]' not found in {data_dir}; "
                     "install the Debian package dataset-fashion-mnist")


def load_split(data_dir, prefix):
    images = read_idx(locate(data_dir, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(locate(data_dir, f"{prefix}-labels-idx1-ubyte"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.dropout = nn.Dropout(0.25)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = x.flatten(1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


def batches(n, batch_size, perm, limit):
    count = (n + batch_size - 1) // batch_size
    if limit is not None:
        count = min(count, limit)
    for k in range(count):
        yield perm[k * batch_size: (k + 1) * batch_size]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lr-schedule", choices=["cosine", "constant"], default="cosine",
                   help="cosine: lr * (1 + cos(pi * k / total_steps)) / 2 at step k (burn-train's default)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--limit-batches", type=int, default=None)
    p.add_argument("--data-dir", default=DEFAULT_DIR)
    p.add_argument("--compile", action="store_true", help="train the model through torch.compile")
    p.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_x, train_y = load_split(args.data_dir, "train")
    test_x, test_y = load_split(args.data_dir, "t10k")

    model = Net()
    forward = torch.compile(model) if args.compile else model
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-5)
    gen = torch.Generator().manual_seed(args.seed)
    steps_per_epoch = (train_x.shape[0] + args.batch_size - 1) // args.batch_size
    if args.limit_batches is not None:
        steps_per_epoch = min(steps_per_epoch, args.limit_batches)
    total_steps = max(1, steps_per_epoch * args.epochs)
    # The closed form burn's CosineAnnealingLrScheduler uses (min_lr 0), stepped per batch.
    if args.lr_schedule == "cosine":
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1.0 + math.cos(math.pi * k / total_steps)))
    else:
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1.0)

    epochs = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = torch.randperm(train_x.shape[0], generator=gen)
        loss_sum, correct, seen = 0.0, 0, 0
        t0, c0 = time.perf_counter(), time.process_time()
        for idx in batches(train_x.shape[0], args.batch_size, perm, args.limit_batches):
            x, y = train_x.index_select(0, idx), train_y.index_select(0, idx)
            logits = forward(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item() * y.shape[0]
            correct += int((logits.argmax(1) == y).sum())
            seen += y.shape[0]
        train_s, train_cpu_s = time.perf_counter() - t0, time.process_time() - c0

        model.eval()
        t0 = time.perf_counter()
        test_loss, test_correct = 0.0, 0
        with torch.no_grad():
            for k in range(0, test_x.shape[0], 1000):
                x, y = test_x[k:k + 1000], test_y[k:k + 1000]
                logits = model(x)
                test_loss += float(F.cross_entropy(logits, y, reduction="sum"))
                test_correct += int((logits.argmax(1) == y).sum())
        test_s = time.perf_counter() - t0
        row = {"epoch": epoch, "train_s": train_s, "train_cpu_s": train_cpu_s, "train_items": seen, "test_s": test_s,
               "train_loss": loss_sum / seen, "train_acc": correct / seen,
               "test_loss": test_loss / test_x.shape[0], "test_acc": test_correct / test_x.shape[0]}
        epochs.append(row)
        print(f"epoch {epoch}: train {train_s:.2f}s (cpu {train_cpu_s:.2f}s) loss {row['train_loss']:.4f} acc {row['train_acc']:.4f} | "
              f"test {test_s:.2f}s loss {row['test_loss']:.4f} acc {row['test_acc']:.4f}", file=sys.stderr,
              flush=True)

    summary = {
        "meta": {"torch": torch.__version__, "threads": torch.get_num_threads(), "batch_size": args.batch_size,
                 "lr": args.lr, "lr_schedule": args.lr_schedule, "seed": args.seed, "limit_batches": args.limit_batches,
                 "compile": args.compile},
        "epochs": epochs,
        "final_test_acc": epochs[-1]["test_acc"] if epochs else None,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"final test accuracy: {summary['final_test_acc']:.4f}")


if __name__ == "__main__":
    main()
