#!/usr/bin/env python3
"""The CUDA benchmark: burn on Device::cuda() next to PyTorch on the same GPU.

Runs burn-cuda-bench (bench/cuda_bench.cpp), then the same workloads in
PyTorch, and prints one table with each side's time, PyTorch's time over
burn's (> 1: burn is faster), burn's rate, the device memory each holds, and
the target each row has (docs/cuda.md, "Performance"):

  sgemm / bf16 GEMM 8192^3   >= 95 % of cuBLAS (PyTorch's matmul calls it; TF32 off for f32)
  add / exp over 256 MiB     >= 85 % of the measured HBM bandwidth (a 1 GiB device copy)
  gelu(x*w + b)              >= 1.5x PyTorch eager
  softmax, layer norm        >= PyTorch
  MLP training step          >= PyTorch eager
  ResNet-18 training step    >= PyTorch eager (batch 32, 224x224)

Timing on both sides: one warm-up run, then `reps` repetitions of `iters`
runs, each ending in a device synchronisation; the figure is the median over
repetitions of the mean time per run.

Usage: cuda_compare.py --burn PATH/burn-cuda-bench [--small] [--filter S] [--json FILE]
Exit status: 0 when both sides ran (targets are reported, never enforced),
2 when there is no CUDA device for one of them (the reason is printed).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

# The workloads and their repetitions: the same names, iters and reps as
# bench/cuda_bench.cpp.
WORKLOADS = {
    "sgemm": (1, 3),
    "bf16_gemm": (1, 3),
    "add": (5, 3),
    "exp": (5, 3),
    "gelu_affine": (5, 3),
    "softmax": (5, 3),
    "layer_norm": (5, 3),
    "mlp_train_step": (10, 3),
    "resnet18_train_step": (5, 3),
}


def timed(torch, fn, iters, reps):
    fn()
    torch.cuda.synchronize()
    means = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
            torch.cuda.synchronize()
        means.append((time.perf_counter() - t0) / iters)
    return statistics.median(means) * 1e3


def torch_side(torch, small, wanted):
    import torch.nn.functional as F

    torch.manual_seed(42)
    # burn computes f32 products and convolutions in f32 unless
    # BURN_CUDA_ALLOW_TF32=1; PyTorch's matmul does too by default, but its
    # cuDNN convolutions take TF32 unless told otherwise.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    n = 512 if small else 8192
    elements = (1 << 20) if small else (1 << 26)
    cols = 1024
    rows = elements // cols
    out = {}

    def run(name, key, make):
        if not wanted(name):
            return
        iters, reps = WORKLOADS[key]
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        fn = make()
        ms = timed(torch, fn, iters, reps)
        out[name] = {"ms": ms, "reserved_bytes": torch.cuda.max_memory_reserved()}

    for dtype, key in ((torch.float32, "sgemm"), (torch.bfloat16, "bf16_gemm")):
        def gemm(dtype=dtype):
            a = torch.randn(n, n, device=dev).to(dtype)
            b = torch.randn(n, n, device=dev).to(dtype)
            return lambda: a @ b
        run(f"{key}_{n}", key, gemm)

    def add():
        a, b = torch.randn(elements, device=dev), torch.randn(elements, device=dev)
        return lambda: a + b
    run("add", "add", add)

    def exp():
        a = torch.randn(elements, device=dev)
        return lambda: torch.exp(a)
    run("exp", "exp", exp)

    def gelu_affine():
        x = torch.randn(rows, cols, device=dev)
        w, b = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
        return lambda: F.gelu(x * w + b)
    run("gelu_affine", "gelu_affine", gelu_affine)

    def softmax():
        x = torch.randn(rows, cols, device=dev)
        return lambda: torch.softmax(x, -1)
    run("softmax", "softmax", softmax)

    def layer_norm():
        x = torch.randn(rows, cols, device=dev)
        gamma, beta = torch.ones(cols, device=dev), torch.zeros(cols, device=dev)
        return lambda: F.layer_norm(x, (cols,), gamma, beta, 1e-5)
    run("layer_norm", "layer_norm", layer_norm)

    def mlp():
        # bench/mlp_step.hpp in PyTorch: 784-1024-1024-10 (small: 64-64-64-10),
        # relu, -mean(gather(log_softmax)), backward, SGD by hand.
        n_in, hidden, classes, batch = (64, 64, 10, 16) if small else (784, 1024, 10, 256)

        def param(i, o):
            s = 2.0 / i
            return ((torch.rand(i, o, device=dev) * 2 - 1) * s).requires_grad_()
        ws = [param(n_in, hidden), param(hidden, hidden), param(hidden, classes)]
        bs = [torch.zeros(k, device=dev, requires_grad=True) for k in (hidden, hidden, classes)]
        x = torch.randn(batch, n_in, device=dev)
        labels = torch.tensor([(i * 7) % classes for i in range(batch)], device=dev).unsqueeze(1)

        def step():
            h = torch.relu(x @ ws[0] + bs[0])
            h = torch.relu(h @ ws[1] + bs[1])
            logits = h @ ws[2] + bs[2]
            loss = -torch.log_softmax(logits, 1).gather(1, labels).mean()
            loss.backward()
            with torch.no_grad():
                for p in ws + bs:
                    p -= 0.01 * p.grad
                    p.grad = None
        return step
    run("mlp_train_step", "mlp_train_step", mlp)

    def resnet18():
        # bench/resnet18.hpp in PyTorch: torchvision's ResNet-18 written out
        # (torchvision may not be installed), SGD momentum 0.9, lr 0.01.
        nn = torch.nn
        batch, image, classes = (2, 64, 10) if small else (32, 224, 1000)

        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
                self.bn1 = nn.BatchNorm2d(cout)
                self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
                self.bn2 = nn.BatchNorm2d(cout)
                self.down = None
                if stride != 1 or cin != cout:
                    self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
                return torch.relu(y + (self.down(x) if self.down is not None else x))

        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for width in (64, 128, 256, 512):
            for b in range(2):
                layers.append(Block(cin, width, 2 if b == 0 and width != 64 else 1))
                cin = width
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
        model = nn.Sequential(*layers).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        images = torch.randn(batch, 3, image, image, device=dev)
        labels = torch.tensor([(i * 7) % classes for i in range(batch)], device=dev).unsqueeze(1)

        def step():
            logits = model(images)
            loss = -torch.log_softmax(logits, 1).gather(1, labels).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return step
    run("resnet18_train_step", "resnet18_train_step", resnet18)

    # The HBM bandwidth the elementwise rows are held to: a 1 GiB copy.
    src = torch.empty(1 << 28, device=dev)
    dst = torch.empty_like(src)
    copy_ms = timed(torch, lambda: dst.copy_(src), 5, 3)
    bandwidth = 2.0 * src.numel() * 4 / (copy_ms * 1e-3)
    return out, bandwidth, torch.cuda.get_device_name(0)


def target(name, ours, theirs, bandwidth):
    """(what the row is held to, the measured fraction of it)."""
    rate = ours["work"] / (ours["ms"] * 1e-3)
    if "gemm" in name:
        return "95 % of cuBLAS", theirs["ms"] / ours["ms"] / 0.95
    if name in ("add", "exp"):
        return "85 % of HBM", rate / bandwidth / 0.85
    if name == "gelu_affine":
        return "1.5x PyTorch", theirs["ms"] / ours["ms"] / 1.5
    return "PyTorch", theirs["ms"] / ours["ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burn", required=True, help="the burn-cuda-bench binary")
    parser.add_argument("--small", action="store_true", help="small sizes (trying the script)")
    parser.add_argument("--filter", default="", help="only workloads whose name holds this")
    parser.add_argument("--json", help="write both sides' figures here")
    args = parser.parse_args()

    cmd = [args.burn] + (["--small"] if args.small else []) + (["--filter", args.filter] if args.filter else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 2:
        print(f"burn side: no CUDA device: {proc.stderr.strip()}")
        return 2
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        print(f"cuda_compare: burn-cuda-bench failed with status {proc.returncode}")
        return 1
    ours = json.loads(proc.stdout)

    try:
        import torch
    except ImportError:
        print("PyTorch side: torch is not installed for this python")
        return 2
    if not torch.cuda.is_available():
        print("PyTorch side: no CUDA device (torch.cuda.is_available() is false)")
        return 2
    theirs, bandwidth, gpu = torch_side(torch, args.small, lambda name: args.filter in name)

    print(f"GPU: {gpu} (burn: {ours['device']}), PyTorch {torch.__version__}, "
          f"measured HBM copy bandwidth {bandwidth / 1e9:.0f} GB/s")
    header = ("workload", "burn ms", "torch ms", "torch/burn", "burn rate", "burn MiB", "torch MiB", "target", "met")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, o in ours["results"].items():
        t = theirs.get(name)
        if t is None:
            continue
        rate = o["work"] / (o["ms"] * 1e-3)
        rate_text = f"{rate / 1e12:.2f} TFLOP/s" if o["unit"] == "flop" else f"{rate / 1e9:.0f} GB/s"
        goal, fraction = target(name, o, t, bandwidth)
        print(f"| {name} | {o['ms']:.3f} | {t['ms']:.3f} | {t['ms'] / o['ms']:.2f} | {rate_text} | "
              f"{o['reserved_bytes'] / 2**20:.0f} | {t['reserved_bytes'] / 2**20:.0f} | {goal} | "
              f"{'yes' if fraction >= 1.0 else f'no ({fraction:.0%} of it)'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"burn": ours, "torch": theirs, "hbm_bytes_per_s": bandwidth, "gpu": gpu}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
