#!/usr/bin/env python3
"""Builds tools/tokenizer_corpus/corpus.jsonl: the strings lathe's tokenizer is checked on.

One JSON string per line (ASCII-escaped). Part hand-written (below), part generated with a fixed
seed, so the file is reproducible: `python3 tools/tokenizer_corpus/build_corpus.py` rewrites it
byte for byte. tools/make_tokenizer_refs.py turns it into reference ids with HF tokenizers.
"""
import json
import os
import random
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

LANGUAGES = [
    "The quick brown fox jumps over the lazy dog.",
    "Portez ce vieux whisky au juge blond qui fume; l'été dernier, c'était déjà ça.",
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. Straße, Maß, Fuß.",
    "El pingüino Wenceslao hizo kilómetros bajo exhaustiva lluvia y frío, añoraba a su querido cachorro. ¿Qué? ¡Sí!",
    "À noite, vovô Kowalsky vê o ímã cair no pé do pinguim queixoso e vovó põe açúcar no chá de tâmaras do jabuti feliz.",
    "Quel fez sghembo copre davanti; perché l'uomo è già là?",
    "Pchnąć w tę łódź jeża lub ośm skrzyń fig. Zażółć gęślą jaźń.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Pijamalı hasta yağız şoföre çabucak güvendi. İstanbul, ılık, Iğdır.",
    "Tiếng Việt có dấu: Người ta thường nói rằng học, học nữa, học mãi.",
    "我能吞下玻璃而不伤身体。人工智能正在改变世界，我们需要负责任地使用它。",
    "我能吞下玻璃而不傷身體。臺灣的繁體中文與簡體中文有所不同。",
    "私はガラスを食べられます。それは私を傷つけません。カタカナとひらがな、漢字。",
    "ｶﾀｶﾅ の 半角 と 全角 ＡＢＣ １２３ ！？",
    "나는 유리를 먹을 수 있어요. 그래도 아프지 않아요. 한국어 자모: ㄱㄴㄷㄹ ㅏㅑㅓㅕ",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني. العربية: مرحبا بالعالم!",
    "من می توانم بدونِ احساس درد شيشه بخورم. فارسی ۱۲۳۴",
    "אני יכול לאכול זכוכית וזה לא מזיק לי. שָׁלוֹם עֲלֵיכֶם",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती. नमस्ते दुनिया १२३",
    "আমি কাঁচ খেতে পারি, তাতে আমার কোনো ক্ষতি হয় না।",
    "நான் கண்ணாடி சாப்பிடுவேன், அதனால் எனக்கு ஒரு கேடும் வராது.",
    "నేను గాజు తినగలను మరియు అలా చేసినా నాకు ఏమి ఇబ్బంది లేదు",
    "ฉันกินกระจกได้ แต่มันไม่ทำให้ฉันเจ็บ ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "ຂອ້ຍກິນແກ້ວໄດ້ໂດຍທີ່ມັນບໍ່ໄດ້ເຮັດໃຫ້ຂອ້ຍເຈັບ.",
    "ខ្ញុំអាចញុំកញ្ចក់បាន ដោយគ្មានបញ្ហារ",
    "ကျွန်တော် ကျွန်မ မှန်စားနိုင်တယ်။ ၎င်းကြောင့် ထိခိုက်မှုမရှိပါ။",
    "მინას ვჭამ და არა მტკივა.",
    "Կրնամ ապակի ուտել և ինծի անհանգիստ չըներ։",
    "ብርጭቆ መብላት እችላለሁ፣ እና አይጎዳኝም።",
    "Я могу есть стекло, оно мне не вредит. Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Я можу їсти скло, і воно мені не зашкодить. Ґанок, їжак, єнот.",
    "Μπορώ να φάω σπασμένα γυαλιά χωρίς να πάθω τίποτα. Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "Би шил идэй чадна, надад хортой биш. ᠮᠣᠩᠭᠣᠯ ᠪᠢᠴᠢᠭ",
    "ཤེལ་སྒོ་ཟ་ནས་ང་ན་གི་མ་རེད།",
    "මට වීදුරු කෑමට හැකියි. එයින් මට කිසි හානියක් සිදු නොවේ.",
    "Mo lè je̩ dígí, kò ní pa mí lára. Ẹ kú àárọ̀.",
    "ᐊᓕᒍᖅ ᓂᕆᔭᕌᖓᒃᑯ ᓱᕋᙱᑦᑐᓐᓇᖅᑐᖓ",
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ Cherokee syllabary",
    "∀x∈ℝ: x²≥0 ⇒ ∑ᵢ aᵢ ≤ ∫₀^∞ f(t) dt ≈ π·e; ¬(p ∧ q) ≡ ¬p ∨ ¬q",
    "Ꭰ 𝒜𝓁𝓅𝒽𝒶 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝕯𝖔𝖚𝖇𝖑𝖊 𝟙𝟚𝟛 — mathematical alphanumerics",
    "𐌰𐌱𐌲 Gothic, 𓀀𓀁 hieroglyphs, 𒀀 cuneiform, 🀄 mahjong, 𠀀𠀁 CJK Ext B",
    "Ελληνικά και English mixed 中文 mixed with العربية and עברית in one line.",
]

EMOJI = [
    "😀😃😄😁😆😅🤣😂🙂🙃",
    "I love it ❤️ and ❤ and ♥️!",
    "Family: 👨‍👩‍👧‍👦 couple: 👩‍❤️‍💋‍👨 pro: 👩🏽‍💻 🧑🏿‍🚀",
    "Skin tones: 👋 👋🏻 👋🏼 👋🏽 👋🏾 👋🏿 👍🏿👍🏻",
    "Flags: 🇺🇸 🇬🇧 🇯🇵 🇩🇪 🇫🇷 🇨🇳 🇮🇳 🇧🇷 🇺🇳 🏳️‍🌈 🏴‍☠️",
    "Subdivision flags: 🏴󠁧󠁢󠁥󠁮󠁧󠁿 🏴󠁧󠁢󠁳󠁣󠁴󠁿 🏴󠁧󠁢󠁷󠁬󠁳󠁿",
    "Keycaps: 1️⃣ 2️⃣ #️⃣ *️⃣ 🔟",
    "Text vs emoji presentation: ☺ ☺️ ✌ ✌️ ✈ ✈️ ©️ ®️ ™️",
    "🇺🇸🇬🇧🇯🇵",
    "👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦",
    "emoji at end 🎉",
    "🎉 emoji at start",
    "hairs: 👨‍🦰 👩‍🦱 🧑‍🦳 👨‍🦲 and 🫠 🫶🏾 🪿 (newer emoji)",
]

COMBINING = [
    "caf\u00e9 vs cafe\u0301",
    "\u00c5ngstr\u00f6m vs A\u030angstro\u0308m vs \u212bngstr\u00f6m",
    "\u2126 ohm sign vs \u03a9 omega",
    "\ud55c\uae00 vs \u1112\u1161\u11ab\u1100\u1173\u11af",
    "a\u0323\u0302 vs a\u0302\u0323 vs \u1ea5\u0323",
    "\u1ec7 \u1ec7\u0301 e\u0323\u0302 e\u0302\u0323",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
    "\u0301 leading combining mark",
    "\uf900\uf901 CJK compatibility ideographs",
    "\u0958\u0959 Devanagari nukta composition exclusions",
    "n\u0303 \u00f1 N\u0303 \u00d1",
    "\u1e9b\u0323 long s with dot",
    "\ufb01 ligature fi and \ufb00 ff (NFC keeps them)",
    "\u0041\u030a\u0301 stacked, \u01fa precomposed",
    "\u0915\u093c\u093f \u0915\u093f\u093c order",
    "\u05e9\u05c1\u05b8 \u05e9\u05b8\u05c1 Hebrew points order",
    "\u0627\u0653 \u0622 Arabic madda",
    "\u3099\u309a \u304b\u3099 \u304c kana voiced marks",
    "\u00e9" * 20 + " " + "e\u0301" * 20,
    # Marks newer than HF's normalisation tables (not reordered by HF) and U+11A7 after a syllable.
    "q\u0e38\u0eba x\u0898\u0316 y\u1df6\u0316 \uac00\u11a7 \u1100\u1161\u11a7",
]

WHITESPACE = [
    "", " ", "  ", "\n", "\n\n", "\r\n", "\r", "\t", " \t ", "\n \n",
    "line one\r\nline two\r\nline three\r\n",
    "lone\rcarriage\rreturns\r",
    "tabs\tbetween\t\twords\t",
    "    four leading spaces",
    "trailing spaces    ",
    "double  space   triple    quad     five",
    "word\n\n\nword\n\n\n\nword",
    "  \n  indented\n    more\n\tand tab\n",
    "end with newline\n",
    "spaces before newline   \nnext",
    "\n\n\nleading newlines",
    "nbsp\u00a0between\u00a0\u00a0words",
    "ideographic\u3000space\u3000\u3000here",
    "en\u2002em\u2003thin\u2009hair\u200afigure\u2007punct\u2008",
    "line\u2028separator and paragraph\u2029separator",
    "next line \u0085 control and \u0085\u0085 two",
    "mongolian\u180evowel\u180e\u180eseparator",
    "mvs  \u180e\u180e and \u180e\u180e. (\u180e) 1\u180e\u180e2 \u180e\u180e\u180e\u180e!",
    "zero\u200bwidth\u200b\u200bspace and joiner\u200dand non\u200cjoiner",
    "\ufeffBOM at start",
    "vertical\x0btab and form\x0cfeed\x0c\x0c",
    "file\x1cgroup\x1drecord\x1eunit\x1fseparators",
    " \u00a0 \u3000 \t mixed unicode spaces before word",
    "x \n y",
    "x  \n  y",
    "x\t\n\ty",
    "a\r\n\r\nb",
    " \r\n \r\n ",
    "    ",
    "\t\t\t",
    "end   ",
    "\u3000\u3000",
    "\u00a0",
]

NUMBERS = [
    "0", "1", "12", "123", "1234", "12345678901234567890",
    "3.14159265358979323846264338327950288419716939937510",
    "1,000,000.00 and 1.000.000,00 and 1 000 000",
    "-42 +17 1e-9 6.022e23 0x1F 0b1010 0o777",
    "Call 555-0134 or +1 (800) 555-0199 before 23:59:59 on 2024-02-29.",
    "Version 1.2.3-rc.4+build.567, IPv4 192.168.0.1, IPv6 fe80::1ff:fe23:4567:890a",
    "Arabic-Indic ٠١٢٣٤٥٦٧٨٩ Extended ۰۱۲۳ Devanagari ०१२३४५६७८९ Thai ๐๑๒๓",
    "Fullwidth １２３４５ and superscripts x² x³ ¹⁰ and subscripts H₂O",
    "Fractions ½ ¼ ¾ ⅓ and roman Ⅻ ⅻ Ⅳ and circled ① ② ⑳",
    "$1,234.56 €99,99 £5 ¥1000 ₹500 ₿0.001 100% 3/4",
    "".join(str(i) for i in range(200)),
]

CODE = [
    'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
    "#include <vector>\n\nint main() {\n\tstd::vector<int> v{1, 2, 3};\n\tfor (auto& x : v) x *= 2;\n\treturn v[0] == 2 ? 0 : 1;\n}\n",
    "fn main() {\n    let s: String = \"héllo\".to_string();\n    println!(\"{s:?} {}\", s.len());\n}\n",
    "const f = async (x) => { await fetch(`/api/${x}`); return x?.y ?? null; };\n",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, 世界\")\n}\n",
    "SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id WHERE u.created_at >= '2024-01-01' GROUP BY u.id HAVING n > 5;",
    '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>T&amp;C</title></head>\n<body><p class="x">Hi&nbsp;there</p></body>\n</html>\n',
    '{"name": "lathe", "version": "0.1.0", "tags": ["llm", "cuda"], "nested": {"a": [1, 2.5, null, true]}}',
    "#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do\n  wc -l \"$f\" | awk '{print $1}' >> out.log 2>&1\ndone\n",
    "regex: ^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+)@(?:[a-z0-9-]+\\.)+[a-z]{2,}$",
    "\\begin{equation}\n  E = mc^2 \\quad \\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}\n\\end{equation}",
    "all: build\n\nbuild:\n\t$(CXX) -O2 -o $@ $^\n\n.PHONY: all build\n",
    "--- a/file.c\n+++ b/file.c\n@@ -1,3 +1,3 @@\n-int x = 1;\n+int x = 2;\n",
    "    if (x) {\n        return;    // comment with trailing spaces   \n    }\n",
    "class Foo(Bar):\n\tdef __init__(self, *args, **kwargs):\n\t\tsuper().__init__(*args, **kwargs)\n",
    "x=>x+1;y=x**2;z=a&&b||!c;w=a!==b;v=a>>>2;u=~a^b|c;",
    "print('it''s') -- SQL escaped quote; echo \"it's\"; printf 'don\\'t'",
]

URLS = [
    "https://www.example.com/path/to/page.html?query=1&lang=en#section-2",
    "http://localhost:8000/v1/chat/completions",
    "ftp://user:p%40ss@ftp.example.org:21/dir/file.tar.gz",
    "mailto:someone@example.com?subject=Hello%20World",
    "Visit https://ja.wikipedia.org/wiki/日本語 or https://xn--n3h.example/ today!",
    "/usr/local/lib/python3.11/site-packages/torch/__init__.py:123",
    "C:\\Users\\Admin\\Documents\\report (final) v2.docx",
    "git@github.com:org/repo.git sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "uuid 123e4567-e89b-12d3-a456-426614174000 base64 SGVsbG8sIFdvcmxkIQ== and aGk+Pz8/",
]

CONTRACTIONS = [
    "it's don't we're they've I'm you'll she'd",
    "IT'S DON'T WE'RE THEY'VE I'M YOU'LL SHE'D",
    "It'S Don'T We'Re They'Ve I'M You'Ll She'D",
    "it'S don'T we'rE they'vE i'm you'lL she'd",
    "'s 't 're 've 'm 'll 'd",
    "'S 'T 'RE 'VE 'M 'LL 'D",
    "'Re 'rE 'Ve 'vE 'Ll 'lL",
    "o'clock rock'n'roll y'all ma'am ne'er-do-well",
    "the dog's bone, the dogs' bones, James's hat",
    "curly ’s and ’t and ‘quoted’ and “double”",
    "it\u2019s not the same as it's",
    "''double apostrophe'' and '''triple'''",
    "I'd've thought y'all'd've known",
    "'sfoo 'tbar 'reX 'llama 'dd",
    "x'\u017f y'\u017f long s case-folds to s",
    "KELVIN \u212a and it'\u212a",
    "123's 4'T ''s",
    "'",
    "'''",
]

SPECIALS = [
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "before<|endoftext|>after",
    "<think>\nLet me think about this.\n</think>\n\nThe answer is 42.",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "<tool_response>\n{\"temp\": 21}\n</tool_response>",
    "<|im_end|><|im_start|>",
    " <|im_end|> ",
    "  <|im_start|>  system  <|im_end|>  ",
    "\n<|im_start|>\n",
    "<|im_start|><|im_start|><|im_start|>",
    "<|object_ref_start|>x<|object_ref_end|><|box_start|>(1,2)<|box_end|><|quad_start|><|quad_end|>",
    "<|vision_start|><|image_pad|><|video_pad|><|vision_pad|><|vision_end|>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n    return 1<|fim_middle|><|fim_pad|>",
    "<|repo_name|>lathe<|file_sep|>src/main.cpp",
    "text<think>inner</think>text<tool_call>x</tool_call>",
    "日本語<|im_end|>中文<|endoftext|>한국어",
    "caf\u00e9<|im_end|>cafe\u0301",
    "emoji👍<|im_end|>👍🏽",
    "'s<|im_end|>'S",
]

NEAR_MISSES = [
    "<|im_start|", "<|im_sta rt|>", "<|IM_START|>", "<| im_start |>", "<|im_start|>>", "<<|im_start|>",
    "<|im_start", "im_start|>", "<|im_end||>", "<|endoftext|", "<|endoftext", "<||>", "<|>", "<|",
    "<think", "</think", "<think >", "< think>", "<thinking>", "<think>>", "<<think>", "</ think>",
    "<tool_call >", "<tool-call>", "<TOOL_CALL>", "</tool_call", "<tool_callx>", "<|im_start|x",
    "<|im_start|<|im_end|>", "<|im_start<|im_start|>|>", "<|im_start|\u200b>", "<|im_start|>\u0301",
    "<|im_start|\n>", "<|endoftext|>|>", "<|<|endoftext|>|>", "\uff1c|im_start|\uff1e",
]

INVALID_LOOKING = [
    "\ufffd replacement character \ufffd\ufffd",
    "noncharacters \ufffe \uffff \U0010fffe \U0010ffff",
    "private use \ue000 \uf8ff \U000f0000 \U00100000",
    "\u00c0\u0080 \u00c3\u00a9 mojibake \u00e2\u0080\u0099 \u00c3\u00a2\u00c2\u0080\u00c2\u0099",
    "C1 controls \u0080\u0081\u009f and \u0085",
    "C0 controls \x01\x02\x03\x07\x08\x1b[31mred\x1b[0m \x7f",
    "NUL \u0000 inside \u0000\u0000",
    "byte-level symbols as text: \u0120\u010a \u0120the \u00c4\u0142",
    "\u0100\u0101\u0102\u0143\u0144",
    "U+10FFFF \U0010ffff and U+10000 \U00010000 and U+FFFF \uffff and U+0800 \u0800 and U+07FF \u07ff",
    "Tag characters \U000e0041\U000e0042 and variation selectors a\ufe0f b\U000e0100",
    "RTL override \u202egnirts desrever\u202c and isolates \u2066x\u2069",
    "interlinear \ufff9a\ufffab\ufffb object \ufffc",
    "surrogate-like text: \\ud800 \\udfff (escaped, literal backslashes)",
    "a\u034fb combining grapheme joiner",
    "\U0001d11e musical \U0001f9ff nazar \U0002a6d6 ext B end",
    # Letters, digits and marks added in Unicode 15.0-16.0 (HF's regex engine knows them; PCRE2
    # 10.42 needs the translated classes): Kawi, CJK Ext H and I, Garay, Egyptian Ext-A, Tulu.
    "Kawi \U00011f04\U00011f05\U00011f06 digits \U00011f50\U00011f51 CJK-H \U00031350\U00031351 CJK-I \U0002ebf0",
    "Garay \U00010d50\U00010d51 \U00010d40\U00010d41 egy \U00013460\U00013c42|R tulu \U00011380\U00011381x",
    "x\U00013c42y 1\U00011f501 !\U00010d50! \u1c89\u1c8a ABC\ua7cb",
]

EN_WORDS = ("the of and to in is was for on that with as by at from it this be are or an not "
            "which have has had but they their his her one all were when we there can more if "
            "time some would what so out up into about than them other only new over also "
            "through after many before most where these well because much each just those "
            "people how too little state good very make world still own see men work long get "
            "here between both life being under never day same another know while last might "
            "us great old year off come since against go came right used take three").split()


def prose(rng, n_words):
    words = []
    sentence_len = 0
    for _ in range(n_words):
        w = rng.choice(EN_WORDS)
        if sentence_len == 0:
            w = w.capitalize()
        words.append(w)
        sentence_len += 1
        if sentence_len > rng.randint(6, 18):
            words[-1] += rng.choice([".", ".", ".", "?", "!", ";", ","])
            if words[-1][-1] in ".?!":
                sentence_len = 0
    return " ".join(words) + "."


def generated(rng):
    out = []
    # Random mixtures drawn from the hand-written material and special pieces.
    pool = LANGUAGES + EMOJI + COMBINING + WHITESPACE + NUMBERS + URLS + CONTRACTIONS + SPECIALS + NEAR_MISSES
    separators = ["", " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", ". ", "'s ", "<|im_end|>", "<think>"]
    for _ in range(60):
        parts = rng.sample(pool, rng.randint(2, 4))
        text = ""
        for p in parts:
            text += p + rng.choice(separators)
        out.append(text)
    # Random code points from interesting ranges, some forming NFD sequences.
    ranges = [(0x20, 0x7e), (0xa0, 0x17f), (0x300, 0x36f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x5ff),
              (0x600, 0x6ff), (0x900, 0x97f), (0xe00, 0xe7f), (0x1100, 0x11ff), (0x2000, 0x206f),
              (0x3000, 0x30ff), (0x4e00, 0x4eff), (0xac00, 0xad00), (0x1f300, 0x1f64f), (0x1f900, 0x1f9ff)]
    for _ in range(40):
        chars = []
        for _ in range(rng.randint(5, 40)):
            lo, hi = rng.choice(ranges)
            cp = rng.randint(lo, hi)
            if 0xd800 <= cp <= 0xdfff:
                continue
            chars.append(chr(cp))
        out.append("".join(chars))
    # NFD forms of the language samples (the normaliser must recompose them).
    for s in LANGUAGES[:16]:
        nfd = unicodedata.normalize("NFD", s)
        if nfd != s:
            out.append(nfd)
    # Whitespace shapes in front of words and at ends.
    for ws in [" ", "  ", "   ", "\t", " \t", "\n", "\n ", " \n", "\r\n  ", "\u00a0 ", " \u3000", "\u2003\u2003"]:
        out.append(ws + "word" + ws + "word" + ws)
        out.append("x" + ws + "123" + ws + "!" + ws)
    # Long inputs (a few KB each).
    out.append(prose(rng, 900))
    out.append("\n\n".join(prose(rng, 120) for _ in range(5)))
    out.append("".join(rng.choice(LANGUAGES) + rng.choice(["\n", " ", "\r\n"]) for _ in range(25)))
    out.append("a" * 3000)
    out.append(" " * 2000 + "x")
    out.append("9" * 2500)
    out.append("😀" * 500)
    out.append("\n" * 300 + "end")
    out.append("ab" * 1500)
    out.append("".join(rng.choice(CODE) for _ in range(12)))
    out.append("的" * 1000)
    out.append("<|im_start|>" * 100 + "<|im_sta" * 50)
    return out


def build():
    rng = random.Random(20240229)
    corpus = (LANGUAGES + EMOJI + COMBINING + WHITESPACE + NUMBERS + CODE + URLS + CONTRACTIONS + SPECIALS
              + NEAR_MISSES + INVALID_LOOKING + generated(rng))
    seen = set()
    unique = []
    for s in corpus:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


def main():
    corpus = build()
    path = os.path.join(HERE, "corpus.jsonl")
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for s in corpus:
            f.write(json.dumps(s, ensure_ascii=True) + "\n")
    print(f"wrote {path}: {len(corpus)} strings, {sum(len(s.encode()) for s in corpus)} UTF-8 bytes")


if __name__ == "__main__":
    main()
