"""ONNX Runtime's side of the ONNX inference benchmark (bench/onnx_compare.sh):
loads OUT_DIR/resnet18.onnx (written by burn-onnx-bench) with the CPU
execution provider, checks its outputs against burn's for the same inputs
(flex at Float32Precision::Highest and at High),
and times session creation and session.run at batch 1 and 32. One JSON
object per line on stdout.

    python onnx_ort.py OUT_DIR [--reps N] [--image PIXELS]
"""
import argparse
import json
import pathlib
import statistics
import time

import numpy as np
import onnxruntime as ort


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--image", type=int, default=224)
    a = p.parse_args()
    d = pathlib.Path(a.dir)
    model = str(d / "resnet18.onnx")

    loads = []
    for _ in range(3):
        t0 = time.perf_counter()
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        loads.append(time.perf_counter() - t0)
    print(json.dumps({"side": "onnxruntime", "what": "load", "seconds": statistics.median(loads),
                      "version": ort.__version__}))

    for batch in (1, 32):
        x = np.fromfile(d / f"input.b{batch}.bin", dtype="<f4").reshape(batch, 3, a.image, a.image)
        def rel_diff(got, name):
            want = np.fromfile(d / f"{name}.b{batch}.bin", dtype="<f4").reshape(batch, 1000)
            return float(np.max(np.abs(got - want) / (1e-4 + np.abs(want))))

        for _ in range(2):
            (got,) = session.run(None, {"images": x})
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            session.run(None, {"images": x})
            times.append(time.perf_counter() - t0)
        print(json.dumps({"side": "onnxruntime", "what": "run", "batch": batch, "seconds": statistics.median(times),
                          "max_rel_diff_vs_burn": rel_diff(got, "expected"),
                          "max_rel_diff_vs_burn_high": rel_diff(got, "expected_high")}))


if __name__ == "__main__":
    main()
