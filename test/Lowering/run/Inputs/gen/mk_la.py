import os
import sys
import torch.nn.functional as F
from common import *

REPORT = []
PIPE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "header.txt")).read()
PHI = {"elu_plus_one": lambda x: F.elu(x) + 1, "relu": F.relu, "identity": lambda x: x}


def la_ref(q, k, v, fm, causal, eps, dtype):
    """Katharopoulos et al.: reassociated (non-causal) and prefix-sum (causal)
    forms, as in fast_transformers' LinearAttention / CausalLinearAttention."""
    q, k, v = (torch.tensor(a, dtype=dtype) for a in (q, k, v))
    Q, K = PHI[fm](q), PHI[fm](k)
    if causal:
        KV = torch.cumsum(K[..., :, None] * v[..., None, :], dim=2)  # [b,h,n,d,e]
        Z = torch.cumsum(K, dim=2)
        num = torch.einsum("bhnd,bhnde->bhne", Q, KV)
        den = (Q * Z).sum(-1) + eps
    else:
        KV = torch.einsum("bhnd,bhne->bhde", K, v)
        num = torch.einsum("bhnd,bhde->bhne", Q, KV)
        den = torch.einsum("bhnd,bhd->bhn", Q, K.sum(2)) + eps
    return num / den[..., None]


def la_quadratic(q, k, v, fm, causal, eps):
    """The n x n form, as an independent check of the reference."""
    q, k, v = (torch.tensor(a, dtype=torch.float64) for a in (q, k, v))
    S = PHI[fm](q) @ PHI[fm](k).transpose(-1, -2)
    if causal:
        S = torch.tril(S)
    return (S @ v) / (S.sum(-1, keepdim=True) + eps)


def la_case(n, fm="elu_plus_one", causal=False, batch=2, heads=2, d=3, e=4, dyn=(), offset=0.0,
            eps=1e-6, name=None):
    c = Case(name or f"linear_attention_{'causal_' if causal else ''}{fm}_n{n}")
    q, qn = c.input((batch, heads, n, d), 7, 3 + n, 1.0, offset, dyn=dyn)
    k, kn = c.input((batch, heads, n, d), 11, 5 + n, 1.0, offset, dyn=dyn)
    v, vn = c.input((batch, heads, n, e), 13, 2 + n, 1.0, 0.0, dyn=dyn)
    o = c.fresh()
    qt, vt = ttype((batch, heads, n, d), dyn), ttype((batch, heads, n, e), dyn)
    attrs = " causal" if causal else ""
    attrs += f" {{eps = {eps!r} : f64}}" if eps != 1e-6 else ""
    c.emit(f"{o} = seq.linear_attention {q}, {k}, {v} feature_map {fm}{attrs}")
    c.emit(f"    : {qt}, {qt}, {vt} -> {vt}")
    ref64 = la_ref(qn, kn, vn, fm, causal, eps, torch.float64).numpy()
    ref32 = la_ref(qn, kn, vn, fm, causal, eps, torch.float32).numpy()
    quad = la_quadratic(qn, kn, vn, fm, causal, eps).numpy()
    assert np.abs(quad - ref64).max() < 1e-9, "reference forms disagree"
    REPORT.append((c.name, float(np.abs(ref32 - ref64).max()), float(np.abs(ref64).max())))
    c.check(o, (batch, heads, n, e), dyn, ref64)
    return c


if __name__ == "__main__":
    causal = sys.argv[1] == "causal"
    atol, rtol = float(sys.argv[2]), float(sys.argv[3])
    cases = [la_case(1, causal=causal), la_case(7, causal=causal),
             la_case(64, causal=causal, batch=1, dyn=(0, 2)), la_case(100, causal=causal, batch=1),
             la_case(7, "relu", causal, offset=0.5),
             la_case(7, "identity", causal, offset=1.2, e=2, dyn=(2,), eps=1e-3),
             la_case(7, causal=causal, batch=1, heads=1, d=1, e=1, dyn=(0, 1, 2),
                     name=f"linear_attention_{'causal_' if causal else ''}unit_dims_n7")]
    print(render_file(__import__("docs").header("causal" if causal else "global"), cases, atol, rtol))
    for r in REPORT:
        print("torch-f32 vs f64: %-40s max|err| %.3g  max|ref| %.3g" % r, file=sys.stderr)
