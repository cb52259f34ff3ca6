import os
import sys
import torch.nn.functional as F
from common import *

REPORT = []
PIPE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "header.txt")).read()


def sscan_ref(u, delta, A, B, C, D, z, bias, softplus, dtype):
    """Mamba's selective_scan_ref, sequence-major."""
    T = lambda a: None if a is None else torch.tensor(np.asarray(a), dtype=dtype)
    u, delta, A, B, C, D, z, bias = map(T, (u, delta, A, B, C, D, z, bias))
    dt = delta + bias if bias is not None else delta
    if softplus:
        dt = F.softplus(dt)
    x = torch.zeros(u.shape[0], u.shape[2], A.shape[1], dtype=dtype)
    ys = []
    for t in range(u.shape[1]):
        x = torch.exp(dt[:, t, :, None] * A) * x + dt[:, t, :, None] * B[:, t, None, :] * u[:, t, :, None]
        ys.append((x * C[:, t, None, :]).sum(-1))
    y = torch.stack(ys, 1)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    return y


def scan_case(L, batch=2, D=4, N=5, dyn=(), use_d=True, use_z=True, use_bias=True, softplus=True, name=None):
    c = Case(name or f"selective_scan_L{L}")
    u, un = c.input((batch, L, D), 7, 3 + L, dyn=dyn)
    dl, dln = c.input((batch, L, D), 11, 5 + L, 1.5 if softplus else 0.5, -0.5 if softplus else 0.9, dyn=dyn)
    # A = -(n + 1) * (1 + small), negative as in Mamba (A = -exp(A_log)).
    a, an = c.input((D, N), 13, 1, 1.0, -2.0)
    b, bn = c.input((batch, L, N), 17, 2 + L, 1.0, dyn=dyn)
    cc, cn = c.input((batch, L, N), 19, 4 + L, 1.0, dyn=dyn)
    extra = ""
    dn = zn = biasn = None
    if use_d:
        d, dn = c.input((D,), 23, 6, 0.7)
        extra += f" D({d} : tensor<{D}xf32>)"
    if use_z:
        z, zn = c.input((batch, L, D), 29, 8 + L, 2.0, dyn=dyn)
        extra += f" z({z} : {ttype((batch, L, D), dyn)})"
    if use_bias:
        bias, biasn = c.input((D,), 31, 9, 0.5)
        extra += f" delta_bias({bias} : tensor<{D}xf32>)"
    attrs = " {delta_softplus}" if softplus else ""
    y = c.fresh()
    ut, bt = ttype((batch, L, D), dyn), ttype((batch, L, N), dyn)
    c.emit(f"{y} = seq.selective_scan {u}, {dl}, {a}, {b}, {cc}{extra}{attrs}")
    c.emit(f"    : {ut}, {ut}, tensor<{D}x{N}xf32>, {bt}, {bt} -> {ut}")
    args = (un, dln, an, bn, cn, dn, zn, biasn, softplus)
    ref64 = sscan_ref(*args, torch.float64).numpy()
    ref32 = sscan_ref(*args, torch.float32).numpy()
    REPORT.append((c.name, float(np.abs(ref32 - ref64).max()), float(np.abs(ref64).max())))
    c.check(y, (batch, L, D), dyn, ref64)
    return c


if __name__ == "__main__":
    atol, rtol = float(sys.argv[1]), float(sys.argv[2])
    cases = [scan_case(1), scan_case(7), scan_case(64, dyn=(0, 1)), scan_case(100),
             scan_case(7, use_d=False, use_z=False, use_bias=False, softplus=False,
                       name="selective_scan_plain_L7"),
             scan_case(64, D=3, N=16, use_z=False, dyn=(1,), name="selective_scan_no_z_L64"),
             scan_case(7, batch=1, D=1, N=1, dyn=(0, 1), name="selective_scan_unit_dims_L7")]
    print(render_file(__import__("docs").header("scan"), cases, atol, rtol))
    for r in REPORT:
        print("torch-f32 vs f64: %-28s max|err| %.3g  max|ref| %.3g" % r, file=sys.stderr)
