// The world model in the page (mlmcourse/viz/in_page.py): ONNX Runtime Web runs the exported
// logits; this script is the rest of the Python pipeline, step for step: the word-level
// tokenizer (mlmcourse/tokenization/word_level.py), fill_mask's softmax and ranking
// (mlmcourse/tasks/fill_mask.py), predict_entities' Viterbi decoding and grouping
// (mlmcourse/tasks/ner/decoding.py). UID is replaced by the box's id.
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
  // The runtime, the vocabulary and the models, loaded once per page for all its boxes.
  function world() {
    if (!window.mlmLiveWorld) {
      var root = document.documentElement.getAttribute("data-content_root") || "./";
      var base = new URL(root + "_static/", location.href).href;
      window.mlmLiveWorld = loadScript(base + config.files.runtime).then(function () {
        ort.env.wasm.numThreads = 1;  // threads need a cross-origin-isolated page
        ort.env.wasm.wasmPaths = base + config.files.runtime.replace(/[^/]*$/, "");
        return fetch(base + "live/" + config.files.metadata);
      }).then(function (response) {
        if (!response.ok) throw new Error("no " + response.url + " (" + response.status + ")");
        return response.json();
      }).then(function (meta) {
        meta.ids = new Map(meta.vocab.map(function (w, i) { return [w, i]; }));
        meta.base = base;
        meta.sessions = {};
        return meta;
      });
    }
    return window.mlmLiveWorld;
  }
  function session(meta, task) {
    if (!meta.sessions[task]) {
      meta.sessions[task] = ort.InferenceSession.create(meta.base + "live/" + config.files[task]);
    }
    return meta.sessions[task];
  }

  // The tokenizer: the pieces of the text with their ids and character spans.
  function pieces(meta, text) {
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
    return session(meta, task).then(function (s) { return s.run({ input_ids: x }); })
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
      return p.id === meta.special.unk && SPECIAL.indexOf(p.text) < 0;
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
    return notice("The world model reads at most " + (meta.max_length - 2) + " words; this is " +
                     (length - 2) + ".");
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
      "world model's vocabulary of " + meta.vocab.length + " words (it reads [UNK] there): " +
      escape(unknown.join(", ")) + "</div>";
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
    world().then(function (meta) {
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
