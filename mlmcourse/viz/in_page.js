// The course's models in the page (mlmcourse/viz/in_page.py): ONNX Runtime Web runs the exported
// logits; this script is the rest of the Python pipeline, step for step: the world model's
// word-level tokenizer (mlmcourse/tokenization/word_level.py) or the English model's normalisation
// (mlmcourse/data/english.py) and BERT WordPiece tokenizer (as the Rust `tokenizers` runs it),
// fill_mask's softmax and ranking (mlmcourse/tasks/fill_mask.py), predict_entities' Viterbi
// decoding and grouping (mlmcourse/tasks/ner/decoding.py). UID is replaced by the box's id.
(function () {
  "use strict";
  var box = document.getElementById("UID");
  if (!box || box.dataset.bound) return;
  box.dataset.bound = "1";
  var config = JSON.parse(box.querySelector("script.mlm-live-config").textContent);
  var input = box.querySelector(".mlm-live-text");
  var status = box.querySelector(".mlm-live-status");
  var out = box.querySelector(".mlm-live-out");
  var SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
  // word_level.py's pattern: a special token whole, a run of letters, digits or "_" (Python's
  // \w), or any other character that is not a space
  var WORD = new RegExp(SPECIAL.map(function (t) { return t.replace(/[[\]]/g, "\\$&"); })
    .join("|") + "|[\\p{L}\\p{N}_]+|[^\\p{L}\\p{N}_\\s]", "gu");
  var COLORS = { PER: "#cfe8f7", ORG: "#fde3b3", LOC: "#c8ecd9", MISC: "#f9d0e3" };

  function show(state, message) {
    box.dataset.state = state;
    status.textContent = message;
  }
  if (location.protocol === "file:") { show("unavailable", config.file_message); return; }

  function escape(text) {
    return String(text).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }
  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src; s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }
  // The runtime once per page; each model's vocabulary and session once for all its boxes.
  function runtime() {
    if (!window.mlmLiveRuntime) {
      var root = document.documentElement.getAttribute("data-content_root") || "./";
      var base = new URL(root + "_static/", location.href).href;
      window.mlmLiveRuntime = loadScript(base + config.runtime).then(function () {
        ort.env.wasm.numThreads = 1;  // threads need a cross-origin-isolated page
        ort.env.wasm.wasmPaths = base + config.runtime.replace(/[^/]*$/, "");
        return base;
      });
    }
    return window.mlmLiveRuntime;
  }
  function model() {
    window.mlmLiveModels = window.mlmLiveModels || {};
    if (!window.mlmLiveModels[config.metadata]) {
      window.mlmLiveModels[config.metadata] = runtime().then(function (base) {
        return fetch(base + "live/" + config.metadata).then(function (response) {
          if (!response.ok) throw new Error("no " + response.url + " (" + response.status + ")");
          return response.json();
        }).then(function (meta) {
          meta.ids = new Map(meta.vocab.map(function (w, i) { return [w, i]; }));
          meta.base = base;
          meta.sessions = {};
          return meta;
        });
      });
    }
    return window.mlmLiveModels[config.metadata];
  }
  function session(meta) {
    if (!meta.sessions[config.model]) {
      meta.sessions[config.model] = ort.InferenceSession.create(meta.base + "live/" + config.model);
    }
    return meta.sessions[config.model];
  }

  // The English model's tokenizer (mlmlive.tokenize, checked against the Rust library on the
  // held-out articles): the corpus's normalisation rules, then special tokens split off as
  // written, BertNormalizer, BertPreTokenizer and greedy longest-match WordPiece.
  var mlmLive = window.mlmLive = window.mlmLive || {};
  var SPECIAL_SPLIT = new RegExp("(" + SPECIAL.map(function (t) {
    return t.replace(/[[\]]/g, "\\$&");
  }).join("|") + ")");
  var PUNCTUATION = /^(?:[!-\/:-@[-`{-~]|\p{P})$/u;  // ASCII punctuation, or Unicode's
  function plainText(rules, text) {  // data/english.py's plain_text: the rules in order
    rules.forEach(function (rule) {
      text = text.replace(new RegExp(rule[0], "gu"), rule[1].replace(/\\(\d)/g, "$$$1"));
    });
    return text;
  }
  function chinese(cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
      (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
      (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
      (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
  }
  function bertNormalize(lowercase, text) {  // clean, CJK apart, then strip accents and lowercase
    var out = [];
    Array.from(text).forEach(function (c) {
      var cp = c.codePointAt(0), space = /^[\t\n\r]$/.test(c) || /^\s$/u.test(c);
      if (cp === 0 || cp === 0xFFFD || (!space && /^\p{C}$/u.test(c))) return;
      if (space) out.push(" ");
      else if (chinese(cp)) out.push(" ", c, " ");
      else out.push(c);
    });
    text = out.join("");
    if (!lowercase) return text;
    return Array.from(text.normalize("NFD").replace(/\p{Mn}/gu, ""), function (c) {
      return c.toLowerCase();  // one character at a time, as Rust's (no final-sigma rule)
    }).join("");
  }
  function bertWords(text) {  // split at spaces, each punctuation character a word of its own
    var words = [];
    text.split(" ").forEach(function (chunk) {
      var word = "";
      Array.from(chunk).forEach(function (c) {
        if (PUNCTUATION.test(c)) { if (word) words.push(word); words.push(c); word = ""; }
        else word += c;
      });
      if (word) words.push(word);
    });
    return words;
  }
  function wordpiece(meta, word) {  // the longest piece in the vocabulary, again and again
    var chars = Array.from(word), found = [], start = 0;
    var unknown = [{ text: word, id: meta.special.unk, unknown: true }];
    if (chars.length > meta.max_chars_per_word) return unknown;
    while (start < chars.length) {
      var end = chars.length, piece = null, id;
      for (; end > start; end--) {
        piece = (start > 0 ? meta.prefix : "") + chars.slice(start, end).join("");
        id = meta.ids.get(piece);
        if (id !== undefined) break;
      }
      if (end === start) return unknown;
      found.push({ text: piece, id: id });
      start = end;
    }
    return found;
  }
  function wordpieces(meta, text) {
    var found = [];
    plainText(meta.rules, text).split(SPECIAL_SPLIT).forEach(function (part, k) {
      if (k % 2 === 1) { found.push({ text: part, id: meta.ids.get(part) }); return; }
      bertWords(bertNormalize(meta.lowercase, part)).forEach(function (word) {
        found.push.apply(found, wordpiece(meta, word));
      });
    });
    return found;
  }
  mlmLive.tokenize = function (meta, text) {  // the ids between [CLS] and [SEP]
    return wordpieces(meta, text).map(function (p) { return p.id; });
  };
  mlmLive.plainText = plainText;

  // The tokenizer: the pieces of the text with their ids (and, word-level, character spans).
  function pieces(meta, text) {
    if (meta.tokenizer === "wordpiece") return wordpieces(meta, text);
    var found = [], m;
    WORD.lastIndex = 0;
    while ((m = WORD.exec(text)) !== null) {
      var word = m[0];
      if (meta.lowercase && SPECIAL.indexOf(word) < 0) word = word.toLowerCase();
      var id = meta.ids.get(word);
      found.push({ text: m[0], id: id === undefined ? meta.special.unk : id,
                   start: m.index, end: m.index + m[0].length });
    }
    return found;
  }
  function logits(meta, task, ids) {
    var x = new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);
    return session(meta).then(function (s) { return s.run({ input_ids: x }); })
      .then(function (result) { return result.logits.data; });  // (1, T, V) flattened
  }
  function notice(message) {  // a reply to what was typed, not a failure of the page
    var error = new Error(message);
    error.notice = true;
    return error;
  }
  function softmax(row) {  // in double precision, from the largest logit
    var top = -Infinity, sum = 0, p = new Float64Array(row.length), i;
    for (i = 0; i < row.length; i++) top = Math.max(top, row[i]);
    for (i = 0; i < row.length; i++) { p[i] = Math.exp(row[i] - top); sum += p[i]; }
    for (i = 0; i < row.length; i++) p[i] /= sum;
    return p;
  }
  function unknownWords(meta, found) {
    return found.filter(function (p) {
      return p.id === meta.special.unk && (p.unknown || SPECIAL.indexOf(p.text) < 0);
    }).map(function (p) { return p.text; });
  }

  // fill_mask: the top-k words at each [MASK], special tokens never proposed.
  function fillMask(meta, text) {
    var found = pieces(meta, text);
    var ids = [meta.special.cls].concat(found.map(function (p) { return p.id; }), [meta.special.sep]);
    var masks = [];
    ids.forEach(function (id, k) { if (id === meta.special.mask) masks.push(k); });
    if (!masks.length) return Promise.reject(notice("Write [MASK] where the model should guess a word."));
    if (ids.length > meta.max_length) return Promise.reject(tooLong(meta, ids.length));
    var V = meta.vocab.length, never = new Set(meta.never);
    return logits(meta, "fill-mask", ids).then(function (data) {
      var answers = masks.map(function (k) {
        var probs = softmax(data.subarray(k * V, (k + 1) * V));
        var order = [];
        for (var i = 0; i < V; i++) if (!never.has(i)) order.push(i);
        order.sort(function (a, b) { return probs[b] - probs[a] || a - b; });
        return order.slice(0, meta.top_k).map(function (i) {
          return { token: meta.vocab[i], id: i, score: probs[i] };
        });
      });
      return fillMaskHtml(meta, found, answers);
    });
  }
  function tooLong(meta, length) {
    return notice("The " + meta.name + " reads at most " + (meta.max_length - 2) + " " +
                  meta.unit + "; this is " + (length - 2) + ".");
  }
  function fillMaskHtml(meta, found, answers) {
    var k = 0, chips = found.map(function (p) {
      if (p.id !== meta.special.mask) return chip(p.text, "#eeeeee", "");
      k += 1;
      return chip(p.text, "#fde3b3", "#" + k + ": " + answers[k - 1][0].token);
    }).join("");
    var charts = answers.map(function (candidates, m) {
      return '<div class="mlm-live-mask" data-mask="' + m + '" style="display:inline-block;' +
        'vertical-align:top;margin:6px 18px 6px 0;min-width:260px"><div style="font-size:12px">' +
        "<b>mask #" + (m + 1) + ": top " + candidates.length + "</b></div>" +
        candidates.map(function (c) {
          return '<div class="mlm-live-candidate" data-token="' + escape(c.token) +
            '" data-score="' + c.score + '" style="display:flex;align-items:center;margin:2px 0;' +
            'font-size:12px"><span style="width:110px;font-family:monospace;text-align:right;' +
            'padding-right:6px">' + escape(c.token) + '</span><span style="display:inline-block;' +
            "height:12px;width:" + Math.max(1, 100 * c.score).toFixed(1) + '%;max-width:220px;' +
            'background:#4c78a8"></span><span style="padding-left:6px">' +
            (100 * c.score).toFixed(1) + "%</span></div>";
        }).join("") + "</div>";
    }).join("");
    return unknownHtml(meta, found) + '<div style="display:flex;flex-wrap:wrap">' + chips +
      "</div><div>" + charts + "</div>";
  }
  function chip(text, color, below) {
    return '<span style="display:inline-block;margin:0 0 6px 8px;text-align:center">' +
      '<span style="display:inline-block;padding:2px 6px;border-radius:4px;background:' + color +
      ';font-family:monospace;font-size:13px">' + escape(text) + "</span>" +
      (below ? '<div style="font-size:11px;color:#444;margin-top:2px">' + escape(below) + "</div>" : "") +
      "</span>";
  }
  function unknownHtml(meta, found) {
    var unknown = unknownWords(meta, found);
    if (!unknown.length) return "";
    return '<div class="mlm-live-unknown" style="font-size:12px;margin-bottom:4px">Not in the ' +
      meta.name + "'s vocabulary of " + meta.vocab.length + " " + meta.unit +
      " (it reads [UNK] there): " + escape(unknown.join(", ")) + "</div>";
  }

  // predict_entities: words are the text's whitespace-separated chunks; each word's first piece
  // decides its tag (later pieces continue it), by Viterbi over the valid BIO sequences.
  function entities(meta, text) {
    var found = pieces(meta, text), words = [], m, chunk = /\S+/g;
    while ((m = chunk.exec(text)) !== null) words.push([m.index, m.index + m[0].length]);
    if (!found.length) return Promise.reject(notice("Type a sentence."));
    var ids = [meta.special.cls].concat(found.map(function (p) { return p.id; }), [meta.special.sep]);
    if (ids.length > meta.max_length) return Promise.reject(tooLong(meta, ids.length));
    found.forEach(function (p) {
      p.word = words.findIndex(function (w) { return w[0] <= p.start && p.start < w[1]; });
    });
    var L = meta.labels.length;
    return logits(meta, "ner", ids).then(function (data) {
      var deciding = found.filter(function (p, k) { return k === 0 || found[k - 1].word !== p.word; });
      var probs = deciding.map(function (p) {
        var k = found.indexOf(p) + 1;  // + 1: [CLS] comes first
        return softmax(data.subarray(k * L, (k + 1) * L));
      });
      var path = viterbi(probs.map(function (row) {
        return Array.from(row, function (q) { return Math.log(Math.max(q, 1e-30)); });
      }), meta.labels);
      var tags = [], scores = [];
      found.forEach(function (p) {
        var d = deciding.indexOf(p);
        if (d >= 0) {
          tags.push(meta.labels[path[d]]); scores.push(probs[d][path[d]]);
        } else {
          var previous = tags[tags.length - 1];
          tags.push(previous === "O" ? "O" : "I-" + previous.slice(2)); scores.push(NaN);
        }
      });
      return entitiesHtml(meta, text, found, tags, group(text, found, tags, scores));
    });
  }
  function split(tag) { return tag === "O" ? ["O", ""] : [tag[0], tag.slice(2)]; }
  function viterbi(emissions, labels) {
    var parsed = labels.map(split), L = labels.length, back = [], t, i, j;
    var allowed = function (prv, nxt) {
      return parsed[nxt][0] !== "I" || (parsed[prv][0] !== "O" && parsed[prv][1] === parsed[nxt][1]);
    };
    var score = emissions[0].map(function (e, i) { return parsed[i][0] !== "I" ? e : -Infinity; });
    for (t = 1; t < emissions.length; t++) {
      var next = [], pointers = [];
      for (j = 0; j < L; j++) {
        var best = -1, value = -Infinity;
        for (i = 0; i < L; i++) {
          var v = allowed(i, j) ? score[i] : -Infinity;
          if (best < 0 || v > value) { best = i; value = v; }
        }
        next.push(value + emissions[t][j]); pointers.push(best);
      }
      score = next; back.push(pointers);
    }
    var path = [score.indexOf(Math.max.apply(null, score))];
    for (t = back.length - 1; t >= 0; t--) path.push(back[t][path[path.length - 1]]);
    return path.reverse();
  }
  function group(text, found, tags, scores) {
    var spans = [], current = null;
    found.forEach(function (p, k) {
      var parts = split(tags[k]);
      if (current && (parts[0] !== "I" || parts[1] !== current.group)) { spans.push(current); current = null; }
      if (parts[0] === "O") return;
      if (!current) current = { group: parts[1], start: p.start, end: p.end, scores: [] };
      current.end = Math.max(current.end, p.end);
      if (!isNaN(scores[k])) current.scores.push(scores[k]);
    });
    if (current) spans.push(current);
    return spans.map(function (s) {
      var total = s.scores.reduce(function (a, b) { return a + b; }, 0);
      return { group: s.group, word: text.slice(s.start, s.end), start: s.start, end: s.end,
               score: s.scores.length ? total / s.scores.length : NaN };
    });
  }
  function entitiesHtml(meta, text, found, tags, spans) {
    var chips = found.map(function (p, k) {
      var type = split(tags[k])[1];
      return '<span class="mlm-live-tag" data-tag="' + tags[k] + '" data-word="' + p.word + '">' +
        chip(p.text, COLORS[type] || (type ? "#e2d9f3" : "#eeeeee"), tags[k]) + "</span>";
    }).join("");
    var list = spans.length ? spans.map(function (s) {
      return '<li class="mlm-live-entity" data-group="' + escape(s.group) + '" data-word="' +
        escape(s.word) + '" data-score="' + s.score + '"><b>' + escape(s.group) + "</b> " +
        escape(s.word) + " (" + s.score.toFixed(2) + ")</li>";
    }).join("") : "<li>no entities found</li>";
    return unknownHtml(meta, found) + '<div style="display:flex;flex-wrap:wrap">' + chips +
      '</div><ul style="font-size:13px;margin:4px 0">' + list + "</ul>";
  }

  // Answer the text box: one run at a time, always for the latest text.
  var running = false, waiting = false;
  function update() {
    if (running) { waiting = true; return; }
    running = true;
    var text = input.value;
    box.dataset.state = "busy";
    model().then(function (meta) {
      return (config.task === "ner" ? entities : fillMask)(meta, text).then(function (markup) {
        out.innerHTML = markup;
        show("ready", config.task === "ner" ? "Tags and entities from the model in this page."
          : "The model's top " + meta.top_k + " words for each [MASK], computed in this page.");
      }, function (error) {
        if (!error.notice) throw error;
        out.innerHTML = "";
        show("ready", error.message);
      });
    }).catch(function (error) {
      show("error", "The in-page model could not run here (" + error.message + ").");
    }).then(function () {
      box.dataset.text = text;
      running = false;
      if (waiting) { waiting = false; update(); }
    });
  }
  input.addEventListener("input", update);
  update();
})();
