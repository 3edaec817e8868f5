"""Small checkers that compare a from-scratch version with minilm's (as in nn-zero-to-hero's cmp)."""

from __future__ import annotations

import torch


def cmp(label: str, ours: torch.Tensor, reference: torch.Tensor, *, atol: float = 1e-5,
        rtol: float = 1e-4) -> bool:
    """Print whether ``ours`` matches ``reference`` (exactly, within tolerance, or not) and return it."""
    ours, reference = torch.as_tensor(ours).detach(), torch.as_tensor(reference).detach()
    if ours.shape != reference.shape:
        print(f"{label:<28} WRONG shape: got {tuple(ours.shape)}, expected {tuple(reference.shape)}")
        return False
    exact = torch.equal(ours, reference)
    close = exact or torch.allclose(ours.double(), reference.double(), atol=atol, rtol=rtol)
    verdict = "exact" if exact else "close" if close else "WRONG"
    diff = (ours.double() - reference.double()).abs().max().item() if ours.numel() else 0.0
    print(f"{label:<28} {verdict:<6} max difference {diff:.1e}")
    return close
