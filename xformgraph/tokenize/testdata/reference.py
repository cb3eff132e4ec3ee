"""Reference for xformgraph/tokenize: trains small tokenizers with the Hugging Face
`tokenizers` package (offline, on a corpus generated here), saves their tokenizer.json and
writes what `tokenizers` gives for the corpus, for the Go tests to compare bit for bit.

    reference.py OUTDIR [--docs N] [--bytes B]

OUTDIR receives:
  docs.bin                 the documents: u32 count, then per document u32 length + UTF-8
  <name>.json              one tokenizer.json per configuration (see TOKENIZERS)
  cases.json               [{"tokenizer", "name", "add_special_tokens", "truncation", "padding",
                             "pack", "docs": [first, end)}]; truncation/padding null = none,
                             "file" = the file's own settings, else as Tokenizer.enable_*
  results.bin              per case, per document (or per packed sample): u32 rows, u32 length,
                           rows*length u32 ids, rows*length u8 attention mask
  pretok.json              pre-tokenizer boundaries of edge-case strings, for the scanner
  unicode/<probe>.txt      big strings over every code point, and what tokenizers makes of them

Packing (the rule the Go op follows, HF run_clm's group_texts plus an optional separator):
every document is encoded with add_special_tokens as given and without truncation or padding,
the separator id (if any) is appended after each document, the ids of all documents are
concatenated in order and cut into rows of `length`; a last partial row is padded on the
padding side with pad_id (attention mask 0) when padding is on, else dropped.
"""

import json
import os
import random
import struct
import sys
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SPECIALS = ["<|endoftext|>", "<pad>", "<s>", "</s>", "<unk>"]

# --- corpus -------------------------------------------------------------------------------

LATIN = ("the of and to in is was for that with as his on be at by had are but from or have an they "
         "which one you were her all she there would their we him been has when who will more no if out "
         "so said what up its about into than them can only other new some could time these two may then "
         "do first any my now such like our over man me even most made after also did many before must "
         "through back years where much your way well down should because each just those people how too "
         "little state good very make world still own see men work long get here between both life being "
         "under never day same another know while last might us great old year off come since against go "
         "came right used take three yesterday today tomorrow naïve café résumé coöperate façade jalapeño "
         "Straße ÆON Øre ŁÓDŹ Ångström İstanbul ıi ǅ ǈ ẞ ß ﬁnal ﬂow").split()
CYRILLIC = "и в не на я быть он с что а по это она этот к но они мы как из у который то за свой весь год от".split()
GREEK = "και το να του η της με που την από για τα είναι σε ΟΔΥΣΣΕΥΣ ΣΟΦΊΑ σοφός".split()
ARABIC = ["مرحبا", "بالعالم", "كِتَابٌ", "العَرَبِيَّة", "٣٤٥", "١٢٣٤٥٦", "سلام"]
HEBREW = ["שָׁלוֹם", "עולם", "בְּרֵאשִׁית", "תּוֹרָה"]
DEVANAGARI = ["नमस्ते", "दुनिया", "हिन्दी", "क़", "संस्कृतम्"]
THAI = ["สวัสดี", "ภาษาไทย", "ประเทศ"]
CJK = ["你好", "世界", "中文字符", "日本語", "ひらがな", "カタカナ", "漢字かな交じり文", "한국어", "안녕하세요"]
HANGUL_JAMO = ["\u1100\u1161\u11a8", "\u1112\u1161\u11ab\u1100\u1173\u11af", "\u110b\u1175"]
EMOJI = ["😀", "👍🏽", "👩🏿‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵", "1️⃣", "❤️", "🧑🏻‍🤝‍🧑🏾", "🤷‍♀️", "☺︎", "🫠"]
COMBINING = ["e\u0301", "a\u0308\u0304", "o\u0323\u0302", "e\u0301\u0323", "q\u0307\u0323", "A\u030a",
             "\u212b", "\u1e9b\u0323", "Z" + "\u0336\u0317\u0301\u0316\u0342" * 9, "x" + "\u0301" * 40]
WHITESPACE = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\u00a0", "\u3000", "\u2003", " \t ",
              "\u2028", "\u2029", "\u0085", "\u000b\u000c", "\u200b", "\ufeff"]
NUMBERS = ["0", "7", "42", "123456", "3.14159", "1,000,000", "2024-06-01", "１２３", "²³", "½", "Ⅻ", "①②",
           "𝟙𝟚", "٠١٢", "०१२", "1e-9", "0x1F", "99.5%"]
CONTRACTIONS = ["don't", "I'M", "you're", "they'll", "we've", "she'd", "it's", "'s", "'re", "can't", "won’t",
                "O'Neil", "rock'n'roll", "'", "''", "'LL", "ma'am"]
COMPAT = ["ＡＢＣ", "ｶﾀｶﾅ", "ﬁ", "ﬀ", "™", "…", "①", "\ufdfa", "\u3392", "㍿", "\u32ff", "\U0001fbf0\U0001fbf9",
          "\ua7f2", "\U00010781", "\U00011935\U00011930", "\U00011938"]
NEWCHARS = ["\u1c89\u1c8a", "\ua7cb\ua7cc", "\ua7dc", "\U000105c0\U000105c1", "\ua7ce", "\U0001e5d0"]
CONTROL = ["\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\x9f", "\U000e0001", "\ufffe", "\uffff", "\ue000",
           "\U0010ffff", "\U000f0000"]
PUNCT = [".", ",", "!", "?", "...", "!!!", "?!", "—", "–", "«", "»", "“", "”", "(", ")", "[", "]", "{", "}",
         "#", "@", "$", "€", "¥", "&&", "||", "->", "=>", "::", "/*", "*/", "<", ">", "</", "/>", "_", "__init__"]
SPECIAL_TEXT = ["<|endoftext|>", "<pad>", "<s>", "</s>", "<unk>", "<sep>", "<|endof", "endoftext|>", "< pad>",
                "yesterday", "yesterdays", "[MASK]", "<mask>"]


def random_codepoints(rnd, n):
    out = []
    while len(out) < n:
        c = rnd.randrange(0x110000) if rnd.random() < 0.3 else rnd.randrange(0x3000)
        if 0xD800 <= c <= 0xDFFF:
            continue
        out.append(chr(c))
    return "".join(out)


def make_doc(rnd, size):
    pools = [LATIN] * 10 + [CYRILLIC, GREEK, ARABIC, HEBREW, DEVANAGARI, THAI, CJK, CJK, HANGUL_JAMO, EMOJI,
                            COMBINING, NUMBERS, NUMBERS, CONTRACTIONS, CONTRACTIONS, COMPAT, NEWCHARS, CONTROL,
                            PUNCT, PUNCT, SPECIAL_TEXT]
    parts = []
    n = 0
    cap = rnd.random() < 0.2
    while n < size:
        r = rnd.random()
        if r < 0.02:
            w = rnd.choice(["a", "z", "é", "字", "1", "!", " "]) * rnd.randrange(50, 3000)  # very long runs
        elif r < 0.05:
            w = random_codepoints(rnd, rnd.randrange(1, 30))
        else:
            w = rnd.choice(rnd.choice(pools))
            if cap and rnd.random() < 0.3:
                w = w.upper()
        parts.append(w)
        s = rnd.random()
        if s < 0.75:
            parts.append(" ")
        elif s < 0.9:
            parts.append(rnd.choice(WHITESPACE))
        elif s < 0.95:
            parts.append(rnd.choice(PUNCT))
        n += len(w) + 1
    if rnd.random() < 0.3:
        parts.insert(0, rnd.choice(WHITESPACE))
    if rnd.random() < 0.3:
        parts.append(rnd.choice(WHITESPACE))
    return "".join(parts)


def corpus(n_docs, n_bytes, seed=2121):
    rnd = random.Random(seed)
    docs = ["", " ", "  ", "\n", "a", "A", "<|endoftext|>", "<pad>", " <pad> ", "don't stop", "Hello world!",
            "\u00a0x", " x", "x ", "x  ", "  x", "\t\tx", "x\t\t", "a\r\nb", "'s'S'sS", "I'M 'm", "1 2 3", "x" * 5000]
    total = sum(len(d.encode()) for d in docs)
    while len(docs) < n_docs or total < n_bytes:
        size = int(rnd.choice([rnd.expovariate(1 / 300), rnd.expovariate(1 / 3000), rnd.randrange(1, 40)]))
        d = make_doc(rnd, max(1, size))
        docs.append(d)
        total += len(d.encode())
    return docs


# --- tokenizers ---------------------------------------------------------------------------

def train_bpe(docs, vocab, **kw):
    margs = dict(fuse_unk=kw.pop("fuse_unk", False), byte_fallback=kw.pop("byte_fallback", False))
    for k, mk in [("unk", "unk_token"), ("continuing_subword_prefix", "continuing_subword_prefix"),
                  ("end_of_word_suffix", "end_of_word_suffix")]:
        if kw.get(k) is not None:
            margs[mk] = kw[k]
    kw.pop("unk", None)
    tok = Tokenizer(models.BPE(**margs))
    if "normalizer" in kw:
        tok.normalizer = kw.pop("normalizer")
    if "pre" in kw:
        tok.pre_tokenizer = kw.pop("pre")
    alphabet = kw.pop("alphabet", pre_tokenizers.ByteLevel.alphabet())
    targs = {k: v for k, v in kw.items() if v is not None}
    tr = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, special_tokens=SPECIALS,
                             initial_alphabet=alphabet, show_progress=False, **targs)
    tok.train_from_iterator(docs, tr)
    return tok


def build(docs, out):
    """Writes the tokenizer.json files; returns their names."""
    train = docs[:len(docs) // 2]
    names = []

    # 1. GPT-2 style: ByteLevel pre-tokenizer without prefix space, no normalizer, added tokens
    #    with lstrip/rstrip/single_word/normalized.
    t = train_bpe(train, 4000, pre=pre_tokenizers.ByteLevel(add_prefix_space=False))
    t.decoder = decoders.ByteLevel()
    t.post_processor = processors.ByteLevel(trim_offsets=True)
    t.add_tokens([AddedToken("<sep>", lstrip=True, rstrip=True, normalized=False),
                  AddedToken("yesterday", single_word=True, normalized=True),
                  AddedToken(" tomorrow", normalized=True), AddedToken("[MASK]", lstrip=True, normalized=False)])
    t.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    t.save(os.path.join(out, "gpt2.json"))
    names.append("gpt2")

    # 2. Normalizers + prefix space + BOS/EOS template, merges rewritten in the legacy "a b"
    #    form, truncation and padding in the file.
    t = train_bpe(train, 3000, normalizer=normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase(),
                                                                   normalizers.Strip()]),
                  pre=pre_tokenizers.ByteLevel(add_prefix_space=True))
    t.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                     special_tokens=[("<s>", t.token_to_id("<s>")),
                                                                     ("</s>", t.token_to_id("</s>"))])
    t.enable_truncation(96, direction="left")
    t.enable_padding(direction="left", pad_id=t.token_to_id("<pad>"), pad_token="<pad>", pad_to_multiple_of=16)
    path = os.path.join(out, "template.json")
    t.save(path)
    j = json.load(open(path, encoding="utf-8"))
    j["model"]["merges"] = [a + " " + b for a, b in j["model"]["merges"]]
    json.dump(j, open(path, "w", encoding="utf-8"), ensure_ascii=False)
    names.append("template")

    # 3. SentencePiece-like BPE without a pre-tokenizer: Prepend/Replace normalizer, byte
    #    fallback, a small alphabet (so that byte fallback and unk are used), fused unk.
    t = train_bpe(train, 3000, unk="<unk>", fuse_unk=True, byte_fallback=True,
                  normalizer=normalizers.Sequence([normalizers.NFC(), normalizers.Prepend("▁"),
                                                   normalizers.Replace(" ", "▁")]),
                  alphabet=[], limit_alphabet=300)
    path = os.path.join(out, "fallback.json")
    t.save(path)
    j = json.load(open(path, encoding="utf-8"))
    vocab = j["model"]["vocab"]
    n = max(vocab.values()) + 1
    for b in range(256):
        k = "<0x%02X>" % b
        if k not in vocab:
            vocab[k] = n
            n += 1
    j["model"]["byte_fallback"] = True
    json.dump(j, open(path, "w", encoding="utf-8"), ensure_ascii=False)
    names.append("fallback")

    # 4. Subword prefix and end-of-word suffix, NFD + StripAccents, RoBERTa post-processor,
    #    unk without byte fallback (unknown characters become <unk>, unfused).
    t = train_bpe(train, 3000, unk="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>",
                  normalizer=normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(),
                                                   normalizers.NFKC()]),
                  pre=pre_tokenizers.ByteLevel(add_prefix_space=True), alphabet=[], limit_alphabet=200)
    t.post_processor = processors.RobertaProcessing(("</s>", t.token_to_id("</s>")),
                                                    ("<s>", t.token_to_id("<s>")))
    t.save(os.path.join(out, "suffix.json"))
    names.append("suffix")

    # Variants made by editing the files above (no training): the settings no trained file
    # has, checked on a subset of the corpus (cases_for).
    def variant(src, name, edit):
        j = json.load(open(os.path.join(out, src + ".json"), encoding="utf-8"))
        edit(j)
        json.dump(j, open(os.path.join(out, name + ".json"), "w", encoding="utf-8"), ensure_ascii=False)
        names.append(name)

    def noregex(j):
        j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": False}]}
    variant("gpt2", "v-noregex", noregex)

    def ignore_merges(j):
        j["model"]["ignore_merges"] = True
        j["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"},
                                                              {"type": "Replace", "pattern": {"String": "ab"}, "content": "<s>"},
                                                              {"type": "Strip", "strip_left": False, "strip_right": True}]}
    variant("gpt2", "v-ignore-merges", ignore_merges)

    def seq_post(j):
        ids = {t["content"]: t["id"] for t in j["added_tokens"]}
        j["post_processor"] = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                      {"Sequence": {"id": "A", "type_id": 0}},
                                                      {"SpecialToken": {"id": "eos", "type_id": 0}}],
             "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {"<s>": {"id": "<s>", "ids": [ids["<s>"]], "tokens": ["<s>"]},
                                "eos": {"id": "eos", "ids": [ids["</s>"], ids["<|endoftext|>"]],
                                        "tokens": ["</s>", "<|endoftext|>"]}}}]}
        j["normalizer"] = {"type": "NFD"}
    variant("gpt2", "v-seq-post", seq_post)

    def bert(j):
        ids = {t["content"]: t["id"] for t in j["added_tokens"]}
        j["post_processor"] = {"type": "BertProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]]}
        j["model"]["fuse_unk"] = True
        j["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "Lowercase"}]}
    variant("suffix", "v-bert", bert)
    return names


# --- cases --------------------------------------------------------------------------------

def configure(tok, case):
    tr, pad = case["truncation"], case["padding"]
    if tr != "file":
        tok.no_truncation()
        if tr:
            tok.enable_truncation(tr["max_length"], direction=tr["direction"])
    if pad != "file":
        tok.no_padding()
        if pad:
            tok.enable_padding(length=pad.get("length"), direction=pad["direction"], pad_id=pad["pad_id"],
                               pad_to_multiple_of=pad.get("pad_to_multiple_of"))


def pack(tok, docs, case):
    """The packing rule (module doc)."""
    p = case["pack"]
    tok.no_truncation()
    tok.no_padding()
    stream = []
    for d in docs:
        stream += tok.encode(d, add_special_tokens=case["add_special_tokens"]).ids
        if p.get("sep_id") is not None:
            stream.append(p["sep_id"])
    L = p["length"]
    full = len(stream) // L * L
    rows = [stream[i:i + L] for i in range(0, full, L)]
    mask = [[1] * L for _ in rows]
    if full < len(stream) and p.get("pad_id") is not None:
        rest = stream[full:]
        padn = L - len(rest)
        if p.get("direction", "right") == "left":
            rows.append([p["pad_id"]] * padn + rest)
            mask.append([0] * padn + [1] * len(rest))
        else:
            rows.append(rest + [p["pad_id"]] * padn)
            mask.append([1] * len(rest) + [0] * padn)
    return rows, mask


def cases_for(name, tok, n_docs):
    pad_id = tok.token_to_id("<pad>")
    if name.startswith("v-"):
        sub = [0, min(n_docs, 250)]
        return [dict(tokenizer=name, name=n, add_special_tokens=True, truncation=tr, padding=None, pack=None, docs=sub)
                for n, tr in [("plain", None), ("trunc-left-32", dict(max_length=32, direction="left"))]]
    sub = [0, min(n_docs, 400)]
    allr = [0, n_docs]
    out = [
        dict(name="plain", add_special_tokens=True, truncation=None, padding=None, docs=allr),
        dict(name="nospecial", add_special_tokens=False, truncation=None, padding=None, docs=sub),
        dict(name="file", add_special_tokens=True, truncation="file", padding="file", docs=sub),
        dict(name="trunc-right-32", add_special_tokens=True, truncation=dict(max_length=32, direction="right"),
             padding=None, docs=sub),
        dict(name="trunc-left-32", add_special_tokens=True, truncation=dict(max_length=32, direction="left"),
             padding=None, docs=sub),
        dict(name="trunc-right-2", add_special_tokens=True, truncation=dict(max_length=2, direction="right"),
             padding=None, docs=sub),
        dict(name="pad-right-64", add_special_tokens=True, truncation=dict(max_length=64, direction="right"),
             padding=dict(length=64, direction="right", pad_id=pad_id), docs=sub),
        dict(name="pad-left-48-nospecial", add_special_tokens=False, truncation=dict(max_length=48, direction="left"),
             padding=dict(length=48, direction="left", pad_id=pad_id), docs=sub),
        dict(name="pad-multiple-8", add_special_tokens=True, truncation=None,
             padding=dict(length=None, direction="right", pad_id=pad_id, pad_to_multiple_of=8), docs=sub),
    ]
    for c in out:
        c["tokenizer"] = name
        c["pack"] = None
    # Packing: the documents grouped into samples of 40 documents each.
    for pk in [dict(length=128, sep_id=tok.token_to_id("<|endoftext|>"), pad_id=pad_id),
               dict(length=100, sep_id=None, pad_id=None),
               dict(length=64, sep_id=tok.token_to_id("</s>"), pad_id=pad_id, direction="left")]:
        out.append(dict(tokenizer=name, name="pack-%d-%s-%s" % (pk["length"], "sep" if pk["sep_id"] is not None else "nosep",
                                                                 "pad" if pk["pad_id"] is not None else "drop"),
                        add_special_tokens=True, truncation=None, padding=None, pack=pk, docs=[0, min(n_docs, 800)],
                        group=40))
    return out


def write_enc(f, rows, mask):
    length = len(rows[0]) if rows else 0
    f.write(struct.pack("<II", len(rows), length))
    for r in rows:
        assert len(r) == length
        f.write(struct.pack("<%dI" % length, *r))
    for m in mask:
        f.write(bytes(m))


# --- pre-tokenizer and Unicode probes -----------------------------------------------------

PRETOK_EDGE = [
    "", " ", "  ", "   ", "a", " a", "  a", "   a", "a ", "a  ", "a   ", "\t", "\ta", "\t\ta", " \ta", "\t a", "a\t\tb",
    "a \t b", "a\n\nb", "a\r\n", "x\u00a0y", "x\u00a0\u00a0y", "x \u00a0y", "\u3000\u3000x", "'s", "'S", "'sa",
    "x's", "x'S", " 's", "''s", "!'s", "'re'", "'ll'", "'l", "'r", "'v'e", "don't", "DON'T", "I'M", "I'm", "rock'n'roll",
    "123abc", "abc123", " 123", "  123", "1 2", "a1b2", "½", "٣٤", "!!!", " !!!", "  !!!", "a!!", "!!a", "?!a b",
    "😀😀", " 😀", "a😀", "e\u0301", "\u0301a", " \u0301", "字字", " 字", "\x00\x01", " \x00", "\x00 ", "a\u2028b",
    "a\u0085b", "end  ", "end \n", "x\u200by", "  \n  x", "\n\n\n", " \n x", "\u1c89x", "x\u1c89", "<|endoftext|>",
]


def unicode_probes(out):
    """One big string per probe over every code point (no surrogates), and tokenizers'
    result: pre-tokenizer piece ends (in code points), and normalized strings."""
    cps = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    d = os.path.join(out, "unicode")
    os.makedirs(d, exist_ok=True)
    # Every character after a letter, a digit, a space and punctuation, and doubled; each
    # unit ends with \x01 before the next unit's letter, a split point whatever the unit
    # holds, so the string can be pre-tokenized in chunks.
    units = ["a" + c + "1" + c + " " + c + "!" + c + c + "\x01" for c in cps]
    pt = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    ends, base = [], 0
    for i in range(0, len(units), 4096):
        chunk = "".join(units[i:i + 4096])
        ends.extend(base + o[1] for _, o in pt.pre_tokenize_str(chunk))
        base += len(chunk)
    open(os.path.join(d, "pretok.txt"), "w", encoding="utf-8", newline="").write("".join(units))
    with open(os.path.join(d, "pretok.ends"), "wb") as f:
        f.write(struct.pack("<%dI" % len(ends), *ends))
    # single_word: an added token followed by a \w character is not matched; each unit is
    # the token, the character and a space (not \w, so the next token's left is a boundary).
    wl = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    wl.add_tokens([AddedToken("\x02", single_word=True)])
    enc = wl.encode("".join("\x02" + c + " " for c in cps), add_special_tokens=False)
    bits = bytearray(len(cps))
    for i, o in zip(enc.ids, enc.offsets):
        if i == 1:
            bits[o[0] // 3] = 1
    open(os.path.join(d, "single_word.bits"), "wb").write(bytes(bits))
    # Normalizers: each code point alone between \x01, then each decomposable one's NFD
    # (composition), then marks in every order (reordering).
    s = "\x01".join(cps)
    marks = "".join("a" + cps[0x300 + i] + cps[0x316 + (i % 20)] + cps[0x5b0 + (i % 30)] + "\x01" for i in range(0x70))
    nfd = normalizers.NFD()
    decomp = "\x01".join(x for x, c in ((nfd.normalize_str(c), c) for c in cps) if x != c)
    text = s + "\x01" + marks + "\x01" + decomp
    open(os.path.join(d, "norm.txt"), "w", encoding="utf-8", newline="").write(text)
    for name, n in [("NFC", normalizers.NFC()), ("NFD", normalizers.NFD()), ("NFKC", normalizers.NFKC()),
                    ("NFKD", normalizers.NFKD()), ("Lowercase", normalizers.Lowercase()),
                    ("StripAccents", normalizers.StripAccents())]:
        open(os.path.join(d, "norm." + name), "w", encoding="utf-8", newline="").write(n.normalize_str(text))


def main():
    out = sys.argv[1]
    n_docs, n_bytes = 0, 3 << 20
    args = sys.argv[2:]
    while args:
        if args[0] == "--docs":
            n_docs = int(args[1])
        elif args[0] == "--bytes":
            n_bytes = int(args[1])
        else:
            raise SystemExit("unknown argument " + args[0])
        args = args[2:]
    os.makedirs(out, exist_ok=True)
    docs = corpus(n_docs, n_bytes)
    with open(os.path.join(out, "docs.bin"), "wb") as f:
        f.write(struct.pack("<I", len(docs)))
        for d in docs:
            b = d.encode("utf-8")
            f.write(struct.pack("<I", len(b)))
            f.write(b)
    cpu = [("corpus", time.process_time())]
    names = build(docs, out)
    cpu.append(("training", time.process_time()))
    cases = []
    with open(os.path.join(out, "results.bin"), "wb") as f:
        for name in names:
            tok = Tokenizer.from_file(os.path.join(out, name + ".json"))
            for c in cases_for(name, tok, len(docs)):
                tok = Tokenizer.from_file(os.path.join(out, name + ".json"))
                lo, hi = c["docs"]
                if c["pack"]:
                    g = c["group"]
                    for i in range(lo, hi, g):
                        rows, mask = pack(tok, docs[i:min(hi, i + g)], c)
                        write_enc(f, rows, mask)
                else:
                    configure(tok, c)
                    for d in docs[lo:hi]:
                        e = tok.encode(d, add_special_tokens=c["add_special_tokens"])
                        write_enc(f, [e.ids], [e.attention_mask])
                cases.append(c)
    json.dump(cases, open(os.path.join(out, "cases.json"), "w"))
    pt = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    json.dump([[s, [o[1] for _, o in pt.pre_tokenize_str(s)]] for s in PRETOK_EDGE],
              open(os.path.join(out, "pretok.json"), "w"))
    cpu.append(("encoding", time.process_time()))
    unicode_probes(out)
    cpu.append(("unicode probes", time.process_time()))
    print("reference: %d documents, %d bytes, %d cases; CPU s: %s" % (
        len(docs), sum(len(d.encode()) for d in docs), len(cases),
        ", ".join("%s %.1f" % (cpu[i][0], cpu[i][1] - (cpu[i - 1][1] if i else 0)) for i in range(len(cpu)))))


if __name__ == "__main__":
    main()
