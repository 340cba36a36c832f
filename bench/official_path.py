"""A rebuild of the published Hayai inference path, the baseline of `ocr_throughput.py --compare-official`.

What a user of the model card runs: `transformers.Siglip2ImageProcessor` (constructed locally with
the published settings) -> the SigLIP2 vision tower -> the projector -> the card's greedy
`generate` loop, float32. It is written from the published model's description (docs/ocr-engine.md)
independently of `app/ocr/generate.py`, in the published code's style: a key/value cache grown
with `torch.cat` each step, grouped-query attention by `repeat_interleave`, an additive float
mask, DSC batch padding left attendable (the published behaviour the app's engine fixes). It
shares the weights of an `app.ocr.model.HayaiModel` so both paths run the same numbers.

One crop at a time it gives the published tokens (check: `python bench/official_path.py`, which
compares it with tests/golden/expected.json on a real-size nova checkpoint).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


class OfficialPath:
    def __init__(self, model):
        self.model = model
        self.cfg = model.cfg
        self._processors: dict[int, object] = {}

    def processor(self, budget: int):
        if budget not in self._processors:
            from transformers import Siglip2ImageProcessor

            self._processors[budget] = Siglip2ImageProcessor(max_num_patches=budget)
        return self._processors[budget]

    # --- the model card's forward ---------------------------------------------------------------
    def _freqs(self) -> torch.Tensor:
        half = self.cfg.head_dim // 2
        return 1.0 / (self.cfg.rope_base ** (torch.arange(0, half, 2, dtype=torch.float32) / half))

    def _prefix(self, inputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Projected vision tokens (B, M, D) and their rope angles (B, M, E/2)."""
        m = self.model
        feats = m.vision_encoder(pixel_values=inputs["pixel_values"],
                                 pixel_attention_mask=inputs["pixel_attention_mask"],
                                 spatial_shapes=inputs["spatial_shapes"]).last_hidden_state
        freqs = self._freqs()
        shapes = inputs["spatial_shapes"].tolist()
        B, N, C = feats.shape
        if self.cfg.projector == "mlp":
            angles = torch.zeros(B, N, self.cfg.head_dim // 2)
            for b, (h, w) in enumerate(shapes):
                idx = torch.arange(h * w)
                angles[b, : h * w] = torch.cat(((idx // w).float()[:, None] * freqs,
                                                (idx % w).float()[:, None] * freqs), -1)
            return m.decoder.projector(feats), angles
        tokens, angle_rows = [], []
        for b, (h, w) in enumerate(shapes):
            g = feats[b, : h * w].reshape(h, w, C).permute(2, 0, 1)[None]
            g = F.pad(g, (0, w % 2, 0, h % 2), mode="replicate")
            g = F.pixel_unshuffle(g, 2)
            h2, w2 = g.shape[-2:]
            tokens.append(g.flatten(2).transpose(1, 2)[0])
            idx = torch.arange(h2 * w2)
            angle_rows.append(torch.cat(((idx // w2).float()[:, None] * freqs,
                                         (idx % w2).float()[:, None] * freqs), -1))
        tokens = torch.nn.utils.rnn.pad_sequence(tokens, batch_first=True)  # padding stays attendable
        angles = torch.nn.utils.rnn.pad_sequence(angle_rows, batch_first=True)
        return m.decoder.projector(tokens), angles

    @staticmethod
    def _rope(x, cos, sin):
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)

    def _layer(self, layer, x, cos, sin, mask, cache):
        cfg = self.cfg
        B, T, _ = x.shape
        h = layer.attn_norm(x)
        a = layer.attn
        q = a.q_norm(F.linear(h, a.w_q.weight).view(B, T, cfg.n_heads, cfg.head_dim)).transpose(1, 2)
        k = a.k_norm(F.linear(h, a.w_k.weight).view(B, T, cfg.n_kv_heads, cfg.head_dim)).transpose(1, 2)
        v = F.linear(h, a.w_v.weight).view(B, T, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
        if cache is not None:
            k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
        new_cache = (k, v)
        rep = cfg.n_heads // cfg.n_kv_heads
        y = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1),
                                           attn_mask=mask)
        y = F.linear(y.transpose(1, 2).reshape(B, T, -1), a.w_o.weight)
        x = x + (y if layer.attn_res_scale is None else layer.attn_res_scale * y)
        f = layer.ffn
        h = layer.ffn_norm(x)
        gate, up = F.linear(h, f.w_gate.weight), F.linear(h, f.w_up.weight)
        if f.clamp:
            gate, up = gate.clamp(max=10.0), up.clamp(-10.0, 10.0)
        y = F.linear(F.silu(gate) * up, f.w_down.weight)
        return x + (y if layer.ffn_res_scale is None else layer.ffn_res_scale * y), new_cache

    def _forward(self, x, angles, mask, caches):
        cos, sin = angles.cos()[:, None], angles.sin()[:, None]
        new = []
        for i, layer in enumerate(self.model.decoder.layers):
            x, c = self._layer(layer, x, cos, sin, mask, None if caches is None else caches[i])
            new.append(c)
        d = self.model.decoder
        head = d.token_embeddings.weight if d.output_head is None else d.output_head.weight
        return F.linear(d.final_norm(x[:, -1]), head), new

    @torch.no_grad()
    def generate(self, images, budget: int, bos_id: int, stop_ids, max_new_tokens: int) -> list[list[int]]:
        inputs = self.processor(budget)(images=[im.convert("RGB") for im in images], return_tensors="pt")
        d = self.model.decoder
        prefix, vis_angles = self._prefix(inputs)
        B, M, _ = prefix.shape
        freqs = self._freqs()
        bos = d.token_embeddings(torch.full((B, 1), bos_id))
        x = torch.cat((prefix, bos), 1)
        angles = torch.cat((vis_angles, torch.cat((0 * freqs, 0 * freqs))[None, None].expand(B, 1, -1)), 1)
        mask = torch.zeros(M + 1, M + 1)
        mask[:M, M] = float("-inf")  # vision tokens do not see the text
        logits, caches = self._forward(x, angles, mask, None)
        out = [[] for _ in range(B)]
        done = torch.zeros(B, dtype=torch.bool)
        stops = torch.tensor(list(stop_ids))
        for s in range(1, max_new_tokens + 1):
            tok = logits.argmax(-1)
            finished = torch.isin(tok, stops)
            for b in range(B):
                if not done[b] and not finished[b]:
                    out[b].append(int(tok[b]))
            done |= finished
            if s == max_new_tokens or bool(done.all()):
                break
            pos = torch.full((1,), float(s)) * freqs
            step_angles = torch.cat((pos, pos))[None, None].expand(B, 1, -1)
            logits, caches = self._forward(d.token_embeddings(tok[:, None]), step_angles, None, caches)
        return out


def _check_against_golden() -> int:
    """Each golden crop alone through the rebuild, nova, every budget: must equal expected.json."""
    import json
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from app.ocr.loading import load_model

    golden = root / "tests" / "golden"
    from tests.golden import writer as mk

    expected = json.loads((golden / "expected.json").read_text())
    crops = mk.golden_crops(seed=expected["seed"])
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = mk.write_checkpoint(Path(tmp) / "nova", variant="nova", seed=expected["seed"])
        model, _ = load_model(folder)
        official = OfficialPath(model)
        for budget, want in expected["expected"]["nova"].items():
            got = [official.generate([c], int(budget), 16001, (16002, 16000), expected["max_new_tokens"])[0]
                   for c in crops]
            print(budget, "equal" if got == want else f"DIFFERENT {got} != {want}")
            bad += got != want
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(_check_against_golden())
