import os
import sys
import torch.nn.functional as F
from common import *

REPORT = []
PIPE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "header.txt")).read()


def conv_ref(x, w, bias, dtype):
    """Mamba's short convolution: nn.Conv1d(groups=C, padding=K-1), cut to L."""
    x = torch.tensor(x, dtype=dtype).transpose(1, 2)
    w = torch.tensor(w, dtype=dtype)
    b = None if bias is None else torch.tensor(bias, dtype=dtype)
    L, C, K = x.shape[2], w.shape[0], w.shape[1]
    return F.conv1d(x, w[:, None, :], b, padding=K - 1, groups=C)[..., :L].transpose(1, 2)


def conv_case(L, batch=2, C=5, K=4, dyn=(), use_bias=True, name=None):
    c = Case(name or f"conv1d_L{L}")
    x, xn = c.input((batch, L, C), 7, 3 + L, dyn=dyn)
    w, wn = c.input((C, K), 11, 5, 0.8)
    bias_text, bias_type, bn = "", "", None
    if use_bias:
        b, bn = c.input((C,), 13, 2, 0.5)
        bias_text, bias_type = f", {b}", f", tensor<{C}xf32>"
    y = c.fresh()
    xt = ttype((batch, L, C), dyn)
    c.emit(f"{y} = seq.conv1d {x}, {w}{bias_text} : {xt}, tensor<{C}x{K}xf32>{bias_type} -> {xt}")
    ref64 = conv_ref(xn, wn, bn, torch.float64).numpy()
    ref32 = conv_ref(xn, wn, bn, torch.float32).numpy()
    REPORT.append((c.name, float(np.abs(ref32 - ref64).max()), float(np.abs(ref64).max())))
    c.check(y, (batch, L, C), dyn, ref64)
    return c


if __name__ == "__main__":
    atol, rtol = float(sys.argv[1]), float(sys.argv[2])
    cases = [conv_case(1), conv_case(7), conv_case(64, dyn=(0, 1)), conv_case(100),
             conv_case(7, K=3, use_bias=False, name="conv1d_no_bias_L7"),
             conv_case(7, K=1, dyn=(1,), name="conv1d_k1_L7"),
             conv_case(7, batch=1, C=1, dyn=(0, 1), name="conv1d_unit_dims_L7")]
    print(render_file(__import__("docs").header("conv"), cases, atol, rtol))
    for r in REPORT:
        print("torch-f32 vs f64: %-28s max|err| %.3g  max|ref| %.3g" % r, file=sys.stderr)
