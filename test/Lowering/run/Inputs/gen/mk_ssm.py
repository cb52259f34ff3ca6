import sys
from ssm import *

STEP = {"zoh": 0.05, "bilinear": 0.05}
REPORT = []


def ssm_case(rule, L, batch=2, H=3, N=8, dyn=(), step=None, singular=False, name=None, random_a=False):
    step = step if step is not None else STEP[rule]
    c = Case(name or f"ssm_{rule}_L{L}")
    u, un = c.input((batch, L, H), 7, 3 + L, dyn=dyn)
    b, bn = c.input((H, N), 13, 5, 0.8)
    cc, cn = c.input((H, N), 17, 11, 0.6)
    d, dn = c.input((H,), 19, 2, 0.5)
    if random_a:
        a, An = c.input((N, N), 23, 7, 2.0)
    elif singular:
        A = hippo(N)[0]
        A[0, :] = 0
        A[:, 0] = 0
        a = c.fresh()
        flat, fa = c.fresh(), c.fresh()
        c.emit(f"{flat} = arith.constant {dense(A)}")
        c.emit(f"{a} = tensor.expand_shape {flat} [[0, 1]] output_shape [{N}, {N}] : tensor<{N*N}xf32> into tensor<{N}x{N}xf32>")
        An = A.astype(np.float32)
    else:
        a, hb = c.fresh(), c.fresh()
        c.emit(f"{a}, {hb} = seq.hippo : tensor<{N}x{N}xf32>, tensor<{N}xf32>")
        An = hippo(N)[0].astype(np.float32)
    y = c.fresh()
    ut = ttype((batch, L, H), dyn)
    c.emit(f"{y} = seq.ssm {u}, {a}, {b}, {cc}, {d} discretization {rule} {{step = {step!r} : f64}}")
    c.emit(f"    : ({ut}, tensor<{N}x{N}xf32>, tensor<{H}x{N}xf32>, tensor<{H}x{N}xf32>, tensor<{H}xf32>) -> {ut}")
    ref64 = ssm_ref(un, An, bn, cn, dn, step, rule, torch.float64).numpy()
    ref32 = ssm_ref(un, An, bn, cn, dn, step, rule, torch.float32).numpy()
    REPORT.append((c.name, float(np.abs(ref32 - ref64).max()), float(np.abs(ref64).max())))
    c.check(y, (batch, L, H), dyn, ref64)
    return c


HEADER = {
 "zoh": """// RUN: seq-opt %s --seq-lower-to-linalg | seq-opt --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm --convert-math-to-libm --convert-arith-to-llvm --convert-vector-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --convert-ub-to-llvm --reconcile-unrealized-casts \\
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so -shared-libs=%mlir_lib_dir/libmlir_runner_utils.so \\
// RUN: | FileCheck %s
""",
}

if __name__ == "__main__":
    rule = sys.argv[1]
    atol, rtol = float(sys.argv[2]), float(sys.argv[3])
    cases = [ssm_case(rule, 1), ssm_case(rule, 7), ssm_case(rule, 64, dyn=(0, 1)), ssm_case(rule, 100)]
    if rule == "zoh":
        cases.append(ssm_case("zoh", 64, step=1.0, singular=True, dyn=(1,), name="ssm_zoh_singular_L64"))
        cases.append(ssm_case("zoh", 7, step=1e-3, name="ssm_zoh_small_step_L7"))
        cases.append(ssm_case("zoh", 7, N=6, step=0.5, random_a=True, name="ssm_zoh_dense_a_L7"))
        cases.append(ssm_case("zoh", 100, N=32, step=0.01, name="ssm_zoh_n32_L100"))
        cases.append(ssm_case("zoh", 7, batch=1, H=1, dyn=(0, 1), name="ssm_zoh_batch1_L7"))
        cases.append(ssm_case("zoh", 7, batch=1, H=1, N=1, step=0.5, name="ssm_zoh_n1_L7"))
    else:
        cases.append(ssm_case("bilinear", 64, step=1.0, singular=True, dyn=(1,), name="ssm_bilinear_singular_L64"))
        cases.append(ssm_case("bilinear", 7, N=6, step=1.0, random_a=True, name="ssm_bilinear_dense_a_L7"))
        cases.append(ssm_case("bilinear", 100, N=32, step=0.01, name="ssm_bilinear_n32_L100"))
        cases.append(ssm_case("bilinear", 7, batch=1, H=1, N=1, step=0.5, dyn=(0, 1), name="ssm_bilinear_n1_L7"))
    print(render_file(__import__("docs").header(rule), cases, atol, rtol))
    for r in REPORT:
        print("torch-f32 vs f64: %-28s max|err| %.3g  max|ref| %.3g" % r, file=sys.stderr)
