"""Reference for the tokenize op (xformgraph/ops_text.go): what `tokenizers` gives for
samples of each input kind (a caption, lines, JSON lines) under op parameters, using the
corpus, tokenizers and packing rule of xformgraph/tokenize/testdata/reference.py.

    tokenize_ref.py OUTDIR

OUTDIR receives gpt2.json and template.json (trained here on a small corpus), samples/<name>
(the bytes of each sample) and cases.json: [{"name", "tokenizer", "sample", "params" (the
op's, without the tokenizer), "ids", "mask" (flat), "shape"}]. Each case states its
parameters twice: as the op takes them, and as the equivalent `tokenizers` settings that
compute the expected output here, so the test checks the op's mapping of its parameters too.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenize", "testdata"))
import reference  # noqa: E402

from tokenizers import Tokenizer  # noqa: E402


def lines_of(data, jsonl, field="text"):
    """The op's document split: lines at \\n, one trailing \\r removed, empty lines skipped
    (for JSON lines, also lines of JSON whitespace); JSON lines give their field."""
    out = []
    for line in data.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not jsonl:
            if line:
                out.append(line)
            continue
        if not line.strip(" \t\r"):
            continue
        out.append(json.loads(line)[field])
    return out


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    docs = reference.corpus(0, 400 << 10, seed=77)
    train = docs
    t = reference.train_bpe(train, 2000, pre=reference.pre_tokenizers.ByteLevel(add_prefix_space=False))
    t.add_special_tokens(["<|endoftext|>"])
    t.save(os.path.join(out, "gpt2.json"))
    t = reference.train_bpe(train, 1500, normalizer=reference.normalizers.Sequence(
        [reference.normalizers.NFKC(), reference.normalizers.Lowercase()]),
        pre=reference.pre_tokenizers.ByteLevel(add_prefix_space=True))
    t.post_processor = reference.processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", t.token_to_id("<s>")), ("</s>", t.token_to_id("</s>"))])
    t.enable_truncation(48, direction="right")
    t.enable_padding(length=48, pad_id=t.token_to_id("<pad>"), pad_token="<pad>")
    t.save(os.path.join(out, "template.json"))

    samples = {}
    for i, d in enumerate(docs[:40]):
        samples["caption%d" % i] = d
    body = docs[40:160]
    samples["jsonl"] = "".join(json.dumps({"id": i, "text": d}, ensure_ascii=(i % 2 == 0)) + ("\r\n" if i % 3 == 0 else "\n")
                               for i, d in enumerate(body)) + "\n  \n"
    samples["lines"] = "".join(d.replace("\n", " ").replace("\r", " ") + "\n" for d in body if d.strip("\n\r")) + "\n\nlast"
    for k, v in samples.items():
        open(os.path.join(out, "samples", k), "wb").write(v.encode("utf-8"))

    cases = []

    def add(name, tok, sample, params, hf, docs_of=None, pack=None):
        tk = Tokenizer.from_file(os.path.join(out, tok + ".json"))
        text = samples[sample]
        if pack is not None:
            ds = docs_of(text) if docs_of else [text]
            rows, mask = reference.pack(tk, ds, dict(add_special_tokens=hf.get("add_special_tokens", True), pack=pack))
            ids = [x for r in rows for x in r]
            m = [x for r in mask for x in r]
            shape = [len(rows), pack["length"]]
        else:
            reference.configure(tk, hf)
            ds = docs_of(text) if docs_of else [text]
            encs = [tk.encode(d, add_special_tokens=hf.get("add_special_tokens", True)) for d in ds]
            ids = [x for e in encs for x in e.ids]
            m = [x for e in encs for x in e.attention_mask]
            shape = [len(encs[0].ids)] if docs_of is None else [len(encs), len(encs[0].ids)]
            assert all(len(e.ids) == shape[-1] for e in encs)
        cases.append(dict(name=name, tokenizer=tok, sample=sample, params=params, ids=ids, mask=m, shape=shape))

    g = Tokenizer.from_file(os.path.join(out, "gpt2.json"))
    pad, eot = g.token_to_id("<pad>"), g.token_to_id("<|endoftext|>")
    tt = Tokenizer.from_file(os.path.join(out, "template.json"))
    tpad = tt.token_to_id("<pad>")
    for i in range(0, 40, 4):
        c = "caption%d" % i
        add(c + "/plain", "gpt2", c, {}, dict(truncation=None, padding=None))
        add(c + "/pad64", "gpt2", c, {"max_length": 64, "truncation": "right", "padding": "max_length", "pad_id": pad},
            dict(truncation=dict(max_length=64, direction="right"), padding=dict(length=64, direction="right", pad_id=pad)))
        add(c + "/left16", "gpt2", c, {"max_length": 16, "truncation": "left", "padding": "max_length", "pad_id": pad,
                                       "padding_side": "left"},
            dict(truncation=dict(max_length=16, direction="left"), padding=dict(length=16, direction="left", pad_id=pad)))
        add(c + "/file", "template", c, {}, dict(truncation="file", padding="file"))
        add(c + "/file-nospecial-32", "template", c, {"max_length": 32, "add_special_tokens": False},
            dict(truncation=dict(max_length=32, direction="right"), padding=dict(length=32, direction="right", pad_id=tpad),
                 add_special_tokens=False))
    jl = lambda s: lines_of(s, True)  # noqa: E731
    ln = lambda s: lines_of(s, False)  # noqa: E731
    add("jsonl/rows", "template", "jsonl", {"input": "jsonl"}, dict(truncation="file", padding="file"), docs_of=jl)
    add("lines/rows-32", "gpt2", "lines", {"input": "lines", "max_length": 32, "truncation": "right", "padding": "max_length",
                                          "pad_id": pad},
        dict(truncation=dict(max_length=32, direction="right"), padding=dict(length=32, direction="right", pad_id=pad)),
        docs_of=ln)
    add("jsonl/pack-128-sep-pad", "gpt2", "jsonl", {"input": "jsonl", "pack": True, "max_length": 128,
                                                    "sep_token": "<|endoftext|>", "padding": "max_length", "pad_id": pad},
        {}, docs_of=jl, pack=dict(length=128, sep_id=eot, pad_id=pad))
    add("lines/pack-100-drop", "gpt2", "lines", {"input": "lines", "pack": True, "max_length": 100}, {}, docs_of=ln,
        pack=dict(length=100, sep_id=None, pad_id=None))
    add("jsonl/pack-64-template-left", "template", "jsonl", {"input": "jsonl", "pack": True, "max_length": 64,
                                                             "padding_side": "left"},
        {}, docs_of=jl, pack=dict(length=64, sep_id=None, pad_id=tpad, direction="left"))
    add("caption0/pack-8", "gpt2", "caption0", {"pack": True, "max_length": 8, "sep_token": "<|endoftext|>"}, {},
        pack=dict(length=8, sep_id=eot, pad_id=None))
    json.dump(cases, open(os.path.join(out, "cases.json"), "w"))
    print("tokenize_ref: %d cases" % len(cases))


main()
