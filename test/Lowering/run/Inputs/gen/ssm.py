import sys
import numpy as np
import torch
from common import *


def hippo(n):
    A = np.zeros((n, n))
    B = np.zeros(n)
    for r in range(n):
        B[r] = np.sqrt(2 * r + 1)
        for c in range(r):
            A[r, c] = -np.sqrt(2 * r + 1) * np.sqrt(2 * c + 1)
        A[r, r] = -(r + 1.0)
    return A, B


def discretize(A, B, step, rule):
    """A: [N, N], B: [H, N] -> Ab [N, N], Bb [H, N]."""
    N = A.shape[0]
    I = torch.eye(N, dtype=A.dtype)
    if rule == "zoh":
        E = torch.zeros(2 * N, 2 * N, dtype=A.dtype)
        E[:N, :N] = A
        E[:N, N:] = I
        F = torch.matrix_exp(step * E)
        return F[:N, :N], B @ F[:N, N:].T
    L = I - step / 2 * A
    return (torch.linalg.solve(L, I + step / 2 * A),
            torch.linalg.solve(L, step * B.T).T)


def ssm_ref(u, A, B, C, D, step, rule, dtype):
    u, A, B, C, D = (torch.tensor(np.asarray(t), dtype=dtype) for t in (u, A, B, C, D))
    Ab, Bb = discretize(A, B, step, rule)
    x = torch.zeros(u.shape[0], u.shape[2], A.shape[0], dtype=dtype)
    ys = []
    for t in range(u.shape[1]):
        x = x @ Ab.T + Bb * u[:, t, :, None]
        ys.append((x * C).sum(-1) + D * u[:, t])
    return torch.stack(ys, 1)
