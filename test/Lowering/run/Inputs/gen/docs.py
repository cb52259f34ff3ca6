import os
COMMON_TAIL = """//
// The inputs come from @gen, a formula that numpy reproduces bit for bit. The
// expected outputs (the dense constants) were computed by PyTorch 1.13 in
// float64 from those float32 inputs and rounded to float32, the exact answer;
// the PyTorch code is quoted above. Each case prints its largest absolute
// error, then the number of elements outside |got - ref| <= 1e-6 + 1e-5 |ref|
// (the golden tests allow 1e-4 absolute and 1e-3 relative).
"""

DOCS = {
"zoh": """
// seq.ssm with zero-order hold, compiled by seq-lower-to-llvm (-O0, -O2) and
// run on the CPU. A is HiPPO-LegS (seq.hippo), a singular A (HiPPO with its
// first row and column zeroed: a pure integrator, which A^-1 (exp(step A) - I)
// B cannot handle), or a dense non-normal A; steps from 1e-3 (no squaring) to
// 1.0 (several squarings); N = 1, 8 and 32; L = 1, 7, 64, 100, some with
// dynamic batch and length; batch and H of 1.
//
// Reference (PyTorch, float64):
//   E = torch.zeros(2 * N, 2 * N); E[:N, :N] = A; E[:N, N:] = torch.eye(N)
//   F = torch.matrix_exp(step * E)
//   Ab, Bb = F[:N, :N], B @ F[:N, N:].T          # B: [H, N]
//   x = torch.zeros(batch, H, N)
//   for t in range(L):
//       x = x @ Ab.T + Bb * u[:, t, :, None]
//       y[:, t] = (x * C).sum(-1) + D * u[:, t]
//
// Measured max abs error: 3e-8 to 6e-8 on the HiPPO cases (outputs ~0.5),
// 9.5e-7 on the singular case (outputs ~5), 1.3e-5 on the dense case
// (outputs ~57). PyTorch's own float32 run of the same code is off by 2.6e-8
// to 1.2e-7, 1.1e-6 and 2.2e-5.
""",
"bilinear": """
// seq.ssm with the bilinear (Tustin) rule, compiled by seq-lower-to-llvm
// (-O0, -O2) and run on the CPU. A is HiPPO-LegS (seq.hippo), HiPPO with its
// first row and column zeroed (singular A; I - step/2 A stays invertible), or
// a dense A for which the elimination has to pivot; N = 1, 8 and 32;
// L = 1, 7, 64, 100, some with dynamic batch and length.
//
// Reference (PyTorch, float64):
//   M = torch.eye(N) - step / 2 * A
//   Ab = torch.linalg.solve(M, torch.eye(N) + step / 2 * A)
//   Bb = torch.linalg.solve(M, step * B.T).T     # B: [H, N]
//   x = torch.zeros(batch, H, N)
//   for t in range(L):
//       x = x @ Ab.T + Bb * u[:, t, :, None]
//       y[:, t] = (x * C).sum(-1) + D * u[:, t]
//
// Measured max abs error: 3e-8 to 6e-8 on the HiPPO cases (outputs ~0.5),
// 9.5e-7 on the singular case (outputs ~5), 0.06 on the dense case, an
// unstable system whose outputs grow to 2e5 (PyTorch float32: 0.07).
""",
"scan": """
// seq.selective_scan (Mamba), compiled by seq-lower-to-llvm (-O0, -O2) and
// run on the CPU: with D, z, delta_bias and softplus; with none of them;
// without z; batch, D and N of 1; L = 1, 7, 64, 100, some with dynamic batch
// and length.
//
// Reference (PyTorch, float64; mamba's selective_scan_ref, sequence-major):
//   dt = delta + delta_bias                      # when given
//   dt = F.softplus(dt)                          # when delta_softplus
//   x = torch.zeros(batch, D, N)
//   for t in range(L):
//       x = torch.exp(dt[:, t, :, None] * A) * x \\
//           + dt[:, t, :, None] * B[:, t, None, :] * u[:, t, :, None]
//       y[:, t] = (x * C[:, t, None, :]).sum(-1)
//   y = y + D * u                                # when D is given
//   y = y * F.silu(z)                            # when z is given
//
// Measured max abs error: 6e-8 to 6e-7 (outputs up to 3.4); PyTorch's own
// float32 run is off by 1.4e-8 to 5.5e-7.
""",
"conv": """
// seq.conv1d (Mamba's causal depthwise convolution), compiled by
// seq-lower-to-llvm (-O0, -O2) and run on the CPU: K = 4 with a bias, K = 3
// without, K = 1 (no padding), batch and C of 1; L = 1 (shorter than the
// padding), 7, 64, 100, some with dynamic batch and length.
//
// Reference (PyTorch, float64):
//   F.conv1d(x.transpose(1, 2), w[:, None, :], bias, padding=K - 1,
//            groups=C)[..., :L].transpose(1, 2)
//
// Measured max abs error: 3e-8 to 2.4e-7 (outputs up to 3.2); PyTorch's own
// float32 run is off by up to 2.9e-7.
""",
"global": """
// Non-causal seq.linear_attention (the reassociated form phi(Q) (phi(K)^T V),
// no n x n matrix), compiled by seq-lower-to-llvm (-O0, -O2) and run on the
// CPU: elu + 1 at n = 1, 7, 64, 100 (dynamic batch and n at 64), relu, and the
// identity map with d_v != d and eps = 1e-3, all sizes 1 but n.
//
// Reference (PyTorch, float64; fast_transformers' LinearAttention):
//   Q, K = phi(q), phi(k)                        # F.elu(x) + 1, F.relu, x
//   KV = torch.einsum("bhnd,bhne->bhde", K, v)
//   num = torch.einsum("bhnd,bhde->bhne", Q, KV)
//   den = torch.einsum("bhnd,bhd->bhn", Q, K.sum(2)) + eps
//   out = num / den[..., None]
// (checked against the quadratic form (Q K^T) V / ((Q K^T) 1 + eps)).
//
// Measured max abs error: 1.5e-8 to 1.2e-7 (outputs up to 1); PyTorch's own
// float32 run is off by 1.8e-8 to 1.4e-7.
""",
"causal": """
// Causal seq.linear_attention (the recurrent form: prefix sums of
// phi(k_j) v_j^T and phi(k_j) carried over n, no n x n matrix), compiled by
// seq-lower-to-llvm (-O0, -O2) and run on the CPU: elu + 1 at n = 1, 7, 64,
// 100 (dynamic batch and n at 64), relu, the identity map with d_v != d and
// eps = 1e-3, all sizes 1 but n.
//
// Reference (PyTorch, float64; fast_transformers' CausalLinearAttention):
//   Q, K = phi(q), phi(k)                        # F.elu(x) + 1, F.relu, x
//   KV = torch.cumsum(K[..., :, None] * v[..., None, :], dim=2)
//   num = torch.einsum("bhnd,bhnde->bhne", Q, KV)
//   den = (Q * torch.cumsum(K, dim=2)).sum(-1) + eps
//   out = num / den[..., None]
// (checked against the masked quadratic form tril(Q K^T) V / (... + eps)).
//
// Measured max abs error: 1.2e-7 to 1.8e-7 (outputs up to 1); PyTorch's own
// float32 run is off by 7.5e-8 to 1.5e-7.
""",
}


def header(kind):
    return open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "header.txt")).read() + DOCS[kind] + COMMON_TAIL
