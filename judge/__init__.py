"""The verifier's judge: does the evidence a claim cites state the claim? Pure Python, no Django.

Parts, each importing only those above it in this list:
- `verdicts`: the vocabulary (verdicts, bands, who decided, reasons as codes with parameters);
- `facts`, `glossary`, `cues`: values of a text (numbers with units, codes, names) and the word lists;
- `analysis` (with `scope`, `context`): a text read once into clauses of typed tokens;
- `alignment`: where each claim unit occurs in the evidence (verbatim, lemma, glossary, conversion);
- `checks/`: what the aligned units say (polarity, owners, slots, direction, quantifiers, roles);
- `window`: the excerpt's neighbourhood in its ref; `reading`: a pair read as the verifier reads it;
- `features`: the analysis as numbers; `model`: the fitted model file, evaluated in pure Python;
- `decision`: calibrated P(supported), P(contradicted), the band and the strongest reasons;
- `split`, `pairs`, `metrics`, `baseline`, `train`: the labelled data, its measure, and the fitting.
See judge/data/MODEL_CARD.md for the model and docs/judge.md for how to measure and refit it.
"""
