'use strict';
(function () {
const $ = (id) => document.getElementById(id);
const hm = /^#dj=([A-Za-z0-9_~.-]{8,200})$/.exec(location.hash);
const DJ = hm ? hm[1] : null;
// The DJ's link opened in a tab that shows the guests' page: start again as the DJ's page.
window.addEventListener('hashchange', () => location.reload());
let S = null, you = null;
const myVote = new Map(), myReqVote = new Map();
// What each vote note is about: {track: ID} or {request: N}. A note goes when its track stops
// playing or its request leaves the list (played, dropped), so it never speaks of what has gone.
const noteAbout = { vmsg: null, qmsg: null };

function nowUs() { return (performance.timeOrigin + performance.now()) * 1000; }
let offsetUs = null, roughOffsetUs = 0;
const probes = [];
function djNowUs() { return nowUs() + (offsetUs === null ? roughOffsetUs : offsetUs); }
function stationPosUs(S, djUs) {
  if (!S || !S.now || !S.anchor) return 0;
  const a = S.anchor, dur = (S.now.duration_ms || 0) * 1000;
  let p = S.paused ? a.position_us : a.position_us + (djUs - a.at_us) * (a.rate || 1);
  if (dur > 0 && p > dur) p = dur;
  return p < 0 ? 0 : p;
}
function fmt(us) {
  const s = Math.max(0, Math.floor(us / 1e6));
  return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
}
function text(node, t) { node.textContent = t == null ? '' : String(t); }
function el(tag, cls, t) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (t != null) e.textContent = String(t);
  return e;
}
function btn(label, aria, fn) {
  const b = el('button', null, label);
  b.type = 'button';
  if (aria) b.setAttribute('aria-label', aria);
  b.addEventListener('click', fn);
  return b;
}
function samePath(p, prefix) {
  if (typeof p !== 'string' || p[0] !== '/' || p[1] === '/' || p[1] === '\\') return false;
  if (/[\u0000-\u0020\\]/.test(p)) return false;
  if (prefix && p.indexOf(prefix) !== 0) return false;
  try { return new URL(p, location.href).origin === location.origin; } catch (e) { return false; }
}
function say(id, a, done) {
  const m = $(id);
  text(m, a && a.message ? a.message : (a && a.ok ? done || 'Done.' : 'Something went wrong'));
  m.classList.toggle('err', !(a && a.ok));
}
async function post(path, params, dj) {
  const headers = {};
  if (dj) headers['X-DJ-Token'] = DJ;
  try {
    const r = await fetch(path, { method: 'POST', body: new URLSearchParams(params), headers,
      credentials: 'same-origin', cache: 'no-store' });
    let j = null;
    try { j = await r.json(); } catch (e) { j = null; }
    if (!r.ok) return { ok: false, message: (j && j.message) || ('The DJ refused (HTTP ' + r.status + ')') };
    return j && typeof j === 'object' ? j : { ok: false, message: 'The DJ gave no answer' };
  } catch (e) {
    return { ok: false, message: 'Cannot reach the DJ' };
  }
}

// ---- clock ----
// The probes also watch the connection: EventSource cannot see the server's pings, so a stream
// whose link died quietly looks open; once /api/time answers again after failing, it is reopened.
let probeFails = 0;
async function probe() {
  const t0 = nowUs(), ac = new AbortController(), to = setTimeout(() => ac.abort(), 3000);
  try {
    const r = await fetch('/api/time', { cache: 'no-store', signal: ac.signal });
    const j = await r.json();
    const t1 = nowUs();
    if (typeof j.dj_us !== 'number') return;
    probes.push({ rtt: t1 - t0, off: j.dj_us - (t0 + t1) / 2 });
    if (probes.length > 10) probes.shift();
    let b = probes[0];
    for (const p of probes) if (p.rtt < b.rtt) b = p;
    offsetUs = b.off;
    L.clockRttMs = Math.round(b.rtt / 10) / 100;
    L.offsetUs = Math.round(b.off);
    if (probeFails >= 2) openEvents();
    probeFails = 0;
  } catch (e) {
    probeFails++;
  } finally {
    clearTimeout(to);
  }
}
let probeN = 0;
async function probeLoop() {
  await probe();
  probeN++;
  setTimeout(probeLoop, probeN < 6 ? 300 : (L.state === 'off' && !probeFails ? 10000 : 2000));
}

// ---- rendering ----
function render() {
  if (!S) return;
  text($('station'), S.station || 'Party radio');
  document.title = (S.station || 'Party radio') + ' · Party radio';
  const n = S.now;
  text($('title'), n ? n.title || 'Untitled' : 'Nothing playing');
  text($('artist'), n ? n.artist : '');
  text($('album'), n ? n.album : '');
  const art = $('art');
  if (n && samePath(n.artwork)) {
    if (art.getAttribute('src') !== n.artwork) art.src = n.artwork;
    art.hidden = false;
  } else {
    art.hidden = true;
    art.removeAttribute('src');
  }
  const t = S.tally || { up: 0, down: 0 };
  text($('up'), t.up || 0);
  text($('down'), t.down || 0);
  text($('listeners'), S.listeners || 0);
  const mine = n ? myVote.get(n.id) : null;
  $('vup').setAttribute('aria-pressed', mine === 'up' ? 'true' : 'false');
  $('vdown').setAttribute('aria-pressed', mine === 'down' ? 'true' : 'false');
  $('vup').disabled = $('vdown').disabled = !n;
  text($('pstate'), n && S.paused ? 'paused' : '');
  text($('djpause'), S.paused ? 'Resume' : 'Pause');
  const cs = $('djcrowdv');
  if (document.activeElement !== cs && typeof S.crowd_skip_percent === 'number') cs.placeholder = S.crowd_skip_percent + ' %';
  renderQueue();
  renderChat();
  tickProgress();
}
// A live station plays no queue: what guests ask for are wishes the DJ reads (docs/LIVE.md).
function isLive() { return !!(S && S.now && S.now.live); }
function renderQueue() {
  const ul = $('queue'), q = S.queue || { entries: [] };
  const live = isLive();
  text($('qtitle'), live ? 'Wishes for the DJ' : 'Up next');
  text($('reqtitle'), live ? 'Wish for a song' : 'Request a song');
  const mode = q.mode || S.requests;
  text($('qmode'), mode ? 'requests ' + mode : '');
  $('qmode').hidden = !mode;
  ul.replaceChildren();
  const es = Array.isArray(q.entries) ? q.entries : [];
  if (!es.length) ul.appendChild(el('li', 'empty', live ? 'No wishes yet. Wish for a song!' : 'Nothing queued yet. Request a song!'));
  for (const e of es) {
    const li = el('li');
    const d = el('div', 'grow');
    const top = el('div', 't');
    top.appendChild(el('b', null, e.title || 'Untitled'));
    if (e.artist) top.appendChild(document.createTextNode(' — ' + e.artist));
    d.appendChild(top);
    const sub = el('div', 'sub');
    if (e.queue_id) sub.appendChild(document.createTextNode((live ? 'wished by ' : 'requested by ') + (e.requester || 'a guest') + ' '));
    else sub.appendChild(document.createTextNode('DJ pick '));
    if (e.awaiting_approval) sub.appendChild(el('span', 'tag', 'awaiting approval'));
    d.appendChild(sub);
    li.appendChild(d);
    if (e.queue_id) {
      const id = e.queue_id, mv = myReqVote.get(id);
      const u = btn('▲ ' + (e.up || 0), 'Vote up request ' + id, () => reqVote(id, mv === 'up' ? 'clear' : 'up'));
      const v = btn('▼ ' + (e.down || 0), 'Vote down request ' + id, () => reqVote(id, mv === 'down' ? 'clear' : 'down'));
      u.className = v.className = 'vote';
      u.setAttribute('aria-pressed', mv === 'up' ? 'true' : 'false');
      v.setAttribute('aria-pressed', mv === 'down' ? 'true' : 'false');
      const acts = el('div', 'acts');
      acts.appendChild(u);
      acts.appendChild(v);
      if (DJ) {
        if (e.awaiting_approval) acts.appendChild(btn('Approve', 'Approve request ' + id, () => dj('approve', id)));
        acts.appendChild(btn('Drop', 'Drop request ' + id, () => dj('drop', id)));
      }
      li.appendChild(acts);
    }
    ul.appendChild(li);
  }
}
let chatKey = '';
function renderChat() {
  const ul = $('chat'), lines = Array.isArray(S.chat) ? S.chat : [];
  const key = lines.map((c) => c.id).join(',');
  if (key === chatKey && ul.childNodes.length) return;
  chatKey = key;
  const atEnd = ul.scrollTop + ul.clientHeight >= ul.scrollHeight - 8;
  ul.replaceChildren();
  if (!lines.length) ul.appendChild(el('li', 'empty', 'No messages yet.'));
  for (const c of lines) {
    const li = el('li');
    li.appendChild(el('b', null, (c.name || c.sender || 'guest') + ':'));
    li.appendChild(document.createTextNode(' ' + (c.text || '')));
    ul.appendChild(li);
  }
  if (atEnd) ul.scrollTop = ul.scrollHeight;
}
function renderYou() {
  text($('me'), you ? (you.name || 'guest ' + String(you.fingerprint || '').slice(0, 8)) : '…');
}
function tickProgress() {
  if (!S || !S.now) {
    $('bar').style.width = '0';
    text($('elapsed'), '0:00');
    text($('total'), '0:00');
    return;
  }
  const dur = (S.now.duration_ms || 0) * 1000, p = stationPosUs(S, djNowUs());
  $('bar').style.width = (dur > 0 ? Math.min(100, (p / dur) * 100) : 0).toFixed(2) + '%';
  text($('elapsed'), fmt(p));
  text($('total'), fmt(dur));
}
function dropStaleNotes() {
  const playing = S && S.now ? S.now.id : null;
  const entries = S && S.queue && Array.isArray(S.queue.entries) ? S.queue.entries : [];
  const waiting = new Set(entries.map((e) => e.queue_id));
  for (const id of Object.keys(noteAbout)) {
    const a = noteAbout[id];
    if (!a || ('track' in a ? a.track === playing : waiting.has(a.request))) continue;
    noteAbout[id] = null;
    text($(id), '');
    $(id).classList.remove('err');
  }
  for (const k of Array.from(myReqVote.keys())) if (!waiting.has(k)) myReqVote.delete(k);
}
function setState(s) {
  if (!s || typeof s !== 'object') return;
  const old = S;
  S = s;
  dropStaleNotes();
  if (offsetUs === null && typeof s.sent_us === 'number') roughOffsetUs = s.sent_us - nowUs();
  render();
  listenStateChanged(old);
}

// ---- actions ----
async function vote(choice) {
  if (!S || !S.now) return;
  const id = S.now.id, cur = myVote.get(id);
  const c = cur === choice ? 'clear' : choice;
  const a = await post('/api/vote', { track: id, choice: c });
  if (a.ok) {
    if (c === 'clear') myVote.delete(id); else myVote.set(id, c);
    if (a.tally && S.now && S.now.id === id) S.tally = a.tally;
    render();
  }
  say('vmsg', a);
  // A refusal (the track changed meanwhile, …) speaks of what plays now.
  noteAbout.vmsg = { track: a.ok ? id : (S && S.now ? S.now.id : null) };
  dropStaleNotes();
}
async function reqVote(id, c) {
  const a = await post('/api/request-vote', { queue: String(id), choice: c });
  if (a.ok) {
    if (c === 'clear') myReqVote.delete(id); else myReqVote.set(id, c);
    if (a.tally && S && S.queue && Array.isArray(S.queue.entries))
      for (const e of S.queue.entries) if (e.queue_id === id) { e.up = a.tally.up; e.down = a.tally.down; }
    render();
  }
  say('qmsg', a);
  // A refusal (already played, dropped) is about a request no longer listed: it lasts as long as the track.
  noteAbout.qmsg = a.ok ? { request: id } : { track: S && S.now ? S.now.id : null };
  dropStaleNotes();
}
async function dj(command, arg) {
  const p = { command };
  if (arg !== undefined && arg !== null && arg !== '') p.arg = String(arg);
  const a = await post('/api/dj', p, true);
  say('djmsg', a, 'Sent: ' + (a.command || command) + '.');
}
async function search() {
  const q = $('q').value.trim(), ul = $('results');
  if (!q) return;
  text($('smsg'), 'Searching…');
  $('smsg').classList.remove('err');
  let j;
  try {
    const r = await fetch('/api/search?q=' + encodeURIComponent(q), { cache: 'no-store' });
    j = await r.json();
    if (!r.ok) throw new Error((j && j.message) || ('HTTP ' + r.status));
  } catch (e) {
    say('smsg', { ok: false, message: 'Search failed: ' + e.message });
    return;
  }
  ul.replaceChildren();
  const rs = Array.isArray(j.results) ? j.results : [];
  let m = rs.length ? rs.length + (rs.length === 1 ? ' match' : ' matches') : 'Nothing found.';
  if (typeof j.catalog === 'string' && j.catalog.indexOf('failed') === 0) m += ' (the catalog is out of reach)';
  say('smsg', { ok: true, message: m });
  for (const r of rs) {
    const li = el('li');
    const d = el('div', 'grow');
    const t = el('div', 't');
    t.appendChild(el('b', null, r.title || 'Untitled'));
    if (r.artist) t.appendChild(document.createTextNode(' — ' + r.artist));
    d.appendChild(t);
    const sub = [r.album, r.duration_ms ? fmt(r.duration_ms * 1000) : '', r.from === 'catalog' ? 'catalog' : 'DJ library'];
    d.appendChild(el('div', 'sub', sub.filter(Boolean).join(' · ')));
    li.appendChild(d);
    const b = btn(isLive() ? 'Wish' : 'Request', null, async () => {
      b.disabled = true;
      const a = await post('/api/request', r.id != null && r.id !== '' ? { id: String(r.id) } : { words: r.title || '' });
      say('smsg', a);
      b.disabled = false;
    });
    b.className = 'pri';
    li.appendChild(b);
    ul.appendChild(li);
  }
}
async function loadState() {
  try {
    const r = await fetch('/api/state', { cache: 'no-store' });
    const j = await r.json();
    if (r.status === 403) {
      // A private station: nothing shows until the guest gives the DJ's join code.
      document.querySelector('main').hidden = true;
      $('joinbox').hidden = false;
      if (es) es.close();
      return;
    }
    if (j && j.you) {
      you = j.you;
      if (j.now && (j.you.vote === 'up' || j.you.vote === 'down')) myVote.set(j.now.id, j.you.vote);
      renderYou();
    }
    setState(j);
  } catch (e) { /* the event stream brings it */ }
}

$('joinf').addEventListener('submit', async (e) => {
  e.preventDefault();
  const a = await post('/api/join', { code: $('jcode').value });
  if (a.ok) { location.reload(); return; }
  say('jmsg', a);
});
$('vup').addEventListener('click', () => vote('up'));
$('vdown').addEventListener('click', () => vote('down'));
$('sform').addEventListener('submit', (e) => { e.preventDefault(); search(); });
$('cform').addEventListener('submit', async (e) => {
  e.preventDefault();
  const i = $('ctext'), t = i.value.trim();
  if (!t) return;
  const a = await post('/api/chat', { text: t });
  if (a.ok) i.value = '';
  say('cmsg', a, 'Sent.');
});
$('chname').addEventListener('click', () => {
  const f = $('nform');
  f.hidden = !f.hidden;
  if (!f.hidden) { $('nname').value = you && you.name ? you.name : ''; $('nname').focus(); }
});
$('nform').addEventListener('submit', async (e) => {
  e.preventDefault();
  const a = await post('/api/name', { name: $('nname').value.trim() });
  say('nmsg', a, 'You are ' + (a.name || '') + ' now.');
  if (a.ok) { $('nform').hidden = true; await loadState(); }
});
$('share').addEventListener('click', () => {
  const b = $('sharebox'), open = b.hidden;
  if (open && !$('qr').getAttribute('src')) $('qr').src = '/qr.svg';
  b.hidden = !open;
  $('share').setAttribute('aria-expanded', open ? 'true' : 'false');
});
if (DJ) {
  $('djpanel').hidden = false;
  $('djskip').addEventListener('click', () => dj('skip'));
  $('djprev').addEventListener('click', () => dj('prev'));
  $('djpause').addEventListener('click', () => dj(S && S.paused ? 'resume' : 'pause'));
  $('djseek').addEventListener('submit', (e) => { e.preventDefault(); dj('seek', $('djseekv').value); });
  $('djcrowd').addEventListener('submit', (e) => { e.preventDefault(); dj('crowd-skip', $('djcrowdv').value); });
  $('djmute').addEventListener('submit', (e) => { e.preventDefault(); dj('mute', $('djmutev').value.trim()); });
  $('djunmute').addEventListener('click', () => dj('unmute', $('djmutev').value.trim()));
  $('djqrb').addEventListener('click', async () => {
    const img = $('djqr');
    if (!img.hidden) { img.hidden = true; return; }
    try {
      const r = await fetch('/qr.svg?dj=1', { headers: { 'X-DJ-Token': DJ }, cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const u = URL.createObjectURL(await r.blob());
      if (img.src.indexOf('blob:') === 0) URL.revokeObjectURL(img.src);
      img.src = u;
      img.hidden = false;
    } catch (e) { say('djmsg', { ok: false, message: 'No QR code: ' + e.message }); }
  });
}

// ---- the DJ's speakers (docs/SPEAKERS.md) ----
// Asked every second (the DJ's only: /api/speakers wants its token). Each speaker, and each room
// of speakers, gets a volume slider, a mute button and (a speaker) a delay trim; a setting goes to
// the DJ as its `speaker NAME|ROOM …` control. Names and rooms are the speakers' own words: shown
// as text only. A slider being moved, or a setting just sent, is not overwritten by the next list.
let speakerShape = null;
const speakerHeld = new Map();  // input -> until (ms): a value just set, not overwritten till then
const speakerTimers = new Map();
function speakerSet(who, what, value) {
  post('/api/dj', { command: 'speaker', arg: who + ' ' + what + ' ' + value }, true).then((a) => {
    say('spkmsg', a);
    loadSpeakers();
  });
}
// A slider moved from the keyboard changes on every step: the last value, 150 ms after the last step, goes.
function speakerSoon(input, who, what) {
  speakerHeld.set(input, Date.now() + 2500);
  clearTimeout(speakerTimers.get(input));
  speakerTimers.set(input, setTimeout(() => speakerSet(who, what, input.value), 150));
}
function speakerRow(label, who, room, s) {
  const li = el('li');
  const t = el('div', 't');
  t.appendChild(el('b', null, label));
  if (s.host) t.appendChild(document.createTextNode(' ' + (room ? '(' + room + ') ' : '') + 'at ' + s.host));
  const state = el('span', 'sub');
  t.appendChild(document.createTextNode(' '));
  t.appendChild(state);
  li.appendChild(t);
  const row = el('div', 'row');
  const vol = el('input');
  vol.type = 'range'; vol.min = '0'; vol.max = '100'; vol.step = '1';
  vol.setAttribute('aria-label', 'Volume of ' + label);
  vol.addEventListener('change', () => speakerSoon(vol, who, 'volume'));
  const level = el('span', 'sub');
  const mute = btn('Mute', 'Mute ' + label, () => speakerSet(who, 'mute', mute.getAttribute('aria-pressed') === 'true' ? 'off' : 'on'));
  row.append(vol, level, mute);
  li.appendChild(row);
  let delay = null;
  if (s.host) {
    const f = el('form', 'row');
    delay = el('input');
    delay.type = 'number'; delay.min = '-500'; delay.max = '500'; delay.step = '1';
    delay.setAttribute('aria-label', 'Delay of ' + label);
    const set = el('button', null, 'Set delay (ms)');
    set.type = 'submit';
    f.append(delay, set);
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      speakerHeld.set(delay, Date.now() + 2500);
      speakerSet(who, 'delay', delay.value);
    });
    li.appendChild(f);
  }
  li.update = (s) => {
    const now = Date.now();
    const free = (i) => i && document.activeElement !== i && !((speakerHeld.get(i) || 0) > now);
    if (free(vol)) vol.value = String(s.volume);
    text(level, s.volume);
    mute.setAttribute('aria-pressed', s.muted ? 'true' : 'false');
    text(mute, s.muted ? 'Unmute' : 'Mute');
    mute.setAttribute('aria-label', (s.muted ? 'Unmute ' : 'Mute ') + label);
    if (free(delay)) delay.value = String(s.delay_ms);
    let said = s.count + ' speakers';
    if (s.host) {
      said = (s.playing ? 'playing' : 'not playing') + (s.delay_ms ? ', delay ' + s.delay_ms + ' ms' : '');
      if (typeof s.sync_error_ms === 'number') said += ', sync ' + (s.sync_error_ms >= 0 ? '+' : '') + s.sync_error_ms.toFixed(1) + ' ms';
      if (typeof s.trouble === 'string' && s.trouble) said += ', trouble: ' + s.trouble;
    }
    text(state, said);
  };
  li.update(s);
  return li;
}
function renderSpeakers(list) {
  $('spkc').hidden = list.length === 0;
  const rooms = new Map();
  for (const s of list) {
    if (!s.room) continue;
    const r = rooms.get(s.room) || { volume: 0, muted: true, count: 0 };
    r.volume = Math.max(r.volume, s.volume); r.muted = r.muted && s.muted; r.count += 1;
    rooms.set(s.room, r);
  }
  const shape = JSON.stringify([list.map((s) => [s.name, s.room, s.host]), Array.from(rooms.keys())]);
  if (shape !== speakerShape) {
    speakerShape = shape;
    $('rooms').replaceChildren(...Array.from(rooms.keys()).map((room) => speakerRow('room ' + room, room, '', rooms.get(room))));
    $('speakers').replaceChildren(...list.map((s) => speakerRow(s.name, s.name, s.room, s)));
    return;
  }
  Array.from($('rooms').children).forEach((li, i) => li.update(rooms.get(Array.from(rooms.keys())[i])));
  Array.from($('speakers').children).forEach((li, i) => li.update(list[i]));
}
async function loadSpeakers() {
  try {
    const r = await fetch('/api/speakers', { headers: { 'X-DJ-Token': DJ }, cache: 'no-store' });
    if (!r.ok) return;
    const j = await r.json();
    const ok = (s) => s && typeof s.name === 'string' && typeof s.room === 'string' && typeof s.host === 'string' &&
      typeof s.volume === 'number' && typeof s.delay_ms === 'number';
    renderSpeakers(j && Array.isArray(j.speakers) ? j.speakers.filter(ok) : []);
  } catch (e) { /* the next one */ }
}
if (DJ) {
  loadSpeakers();
  setInterval(loadSpeakers, 1000);
}

// ---- live updates ----
let es = null, downSince = 0;
let lastEventAt = 0;
function openEvents() {
  if (es) es.close();
  es = new EventSource('/api/events');
  lastEventAt = Date.now();
  es.addEventListener('state', (e) => {
    lastEventAt = Date.now();
    try { setState(JSON.parse(e.data)); } catch (x) { /* bad event */ }
  });
  // The DJ sends a ping every 5 s without a change: 12 s of silence means a dead stream.
  es.addEventListener('ping', () => { lastEventAt = Date.now(); });
  es.onopen = () => { $('conn').hidden = true; };
  es.onerror = () => { $('conn').hidden = es.readyState === 1; };
}
setInterval(() => {
  const open = es && es.readyState === 1 && probeFails < 2 && Date.now() - lastEventAt < 12000;
  $('conn').hidden = !!open;
  if (open) { downSince = 0; return; }
  if (!downSince) downSince = Date.now();
  else if (Date.now() - downSince > 5000) { downSince = Date.now(); openEvents(); }
}, 1000);
setInterval(tickProgress, 250);

// ---- listening in the browser ----
// When is the output heard? AudioContext.getOutputTimestamp() says which context time is heard at
// which performance time, but not every engine's can be believed: WebKit's performanceTime runs at
// about twice real time (WebKitGTK 2.50; Safari is reported to give wrong values too). So the page
// believes it only while each reading stays within nearMs of performance.now() and, from one reading
// to the next, its performance time advances as its context time does (the audio clock's rate,
// within slackMs + rate of the step). One reading that breaks the rule and this AudioContext uses
// the fallback (currentTime, heard after the latencies the context reports) until the guest
// presses Listen again. Pure, so that the browser tests run it on readings made up for them.
const TRUST = { nearMs: 250, slackMs: 25, rate: 0.02 };
function judgeTimestamp(st, r) {
  // st: {broken, last} (null: a new context). r: {c: contextTime s, p: performanceTime ms, now: performance.now()}.
  const prev = st || { broken: false, last: null };
  const usable = r && Number.isFinite(r.c) && Number.isFinite(r.p) && Number.isFinite(r.now) && r.c > 0 && r.p > 0;
  // Zeros: the context has not played yet. Neither believed nor held against it.
  if (!usable) return { broken: prev.broken, last: prev.last, use: false };
  let bad = Math.abs(r.p - r.now) > TRUST.nearMs;
  if (prev.last) {
    const dc = r.c - prev.last.c, dp = r.p - prev.last.p;
    bad = bad || dc < 0 || Math.abs(dp - dc * 1000) > TRUST.slackMs + TRUST.rate * dc * 1000;
  }
  const broken = prev.broken || bad;
  return { broken, last: r, use: !broken };
}
// Which part of the output latency a believed timestamp leaves out, in ms. By the specification
// the context time it gives is what is heard at its performance time, so it lags the context's
// current time by the output latency: Chromium's does. Firefox's gives the current time instead
// (a lag near 0 while outputLatency says 39 ms), so its performance time is when that context time
// is handed to the system, and the output latency comes on top. Found from the numbers, not from
// the browser's name: a lag below half the reported latency means the timestamp left it out.
function missingLatencyMs(lagMs, outputLatencyMs) {
  if (!(outputLatencyMs > 1) || !Number.isFinite(lagMs)) return 0;
  return lagMs < outputLatencyMs / 2 ? outputLatencyMs : 0;
}
// Latency no one reports. WebKitGTK (2.50) says outputLatency 0, yet once a source plays, its
// currentTime runs about 60 ms further ahead of performance.now() than while nothing plays: it
// renders into GStreamer's PulseAudio buffer, which is heard that much later (measured at the
// sink: the page played 63 ms late). So where the context reports no output latency and its
// timestamp is not believed, the page reads d = currentTime - performance.now() (ms) every 20 ms
// (a track can load in a few hundred): the lower median of the last `keep` readings taken while
// it has no source at all (at least minIdle; a track loading) is the pace at which the output is
// heard, its floor; how far d runs above the floor counts as output latency. A median, not the
// lowest: on a loaded machine the audio thread stalls, d dips and catches up, and a dip is no
// pace. Not around a start either: there WebKitGTK's clock stalls for up to 350 ms and then
// overshoots. Each track's loading adds readings, so a drift between the audio clock and
// performance.now() is measured again with every track. Pure, for the browser tests.
const AHEAD = { minIdle: 5, keep: 25 };
function idleFloor(readings) {
  // readings: d (ms) taken while nothing sounded, the newest last. null: too few to tell.
  const ok = (readings || []).filter(Number.isFinite).sort((a, b) => a - b);
  return ok.length >= AHEAD.minIdle ? ok[(ok.length - 1) >> 1] : null;
}
function unreportedLatencyMs(floorMs, dMs, outputLatencyMs) {
  // d above the floor, when the context reports no output latency of its own.
  if (outputLatencyMs > 1 || !Number.isFinite(floorMs) || !Number.isFinite(dMs)) return 0;
  return Math.max(0, dMs - floorMs);
}
const L = window.partyradioListen = { state: 'off', errorsMs: [], clockRttMs: null, offsetUs: null, samples: [],
  restarts: 0, outputTimestamp: null, startBiasMs: 0, clock: null, addedLatencyMs: 0, runAheadMs: 0, judgeTimestamp,
  missingLatencyMs, idleFloor, unreportedLatencyMs, live: liveFigures(), liveDueUs, djUsToCtx, livePlace, liveRecords,
  oggCrc, oggPage, oggOpus, oggChunk, oggKeep, oggExtraMs };
let actx = null, buf = null, bufId = null, loadingId = null, src = null, seg = null, nudge = 1, startBias = 0;
let trust = null, lags = [];
// The run-ahead's readings: the last readings without sound, and their floor.
let idle = [], floorMs = null;
function sampleRunAhead() {
  if (!actx || L.state === 'off' || actx.state !== 'running') return;
  const d = actx.currentTime * 1000 - performance.now();
  if (!src) {
    idle.push(d);
    if (idle.length > AHEAD.keep) idle.shift();
    const f = idleFloor(idle);
    if (f !== null) floorMs = f;
  }
}
setInterval(sampleRunAhead, 20);
function push(a, v) { a.push(v); if (a.length > 600) a.splice(0, a.length - 600); }
function outTs() {
  // contextTime being heard at performanceTime (ms). Fallback: currentTime now, plus the latencies.
  const ts = actx.getOutputTimestamp ? actx.getOutputTimestamp() : null;
  const now = performance.now(), cur = actx.currentTime;
  trust = judgeTimestamp(trust, ts ? { c: ts.contextTime, p: ts.performanceTime, now } : null);
  if (trust.use) {
    // How far the timestamp's context time lags the current one, both taken to now: the median of
    // the last readings (currentTime moves in steps of the engine's render quantum).
    lags.push((cur - ts.contextTime) * 1000 - (now - ts.performanceTime));
    if (lags.length > 20) lags.shift();
    const sorted = lags.slice().sort((a, b) => a - b);
    const add = missingLatencyMs(sorted[sorted.length >> 1], (actx.outputLatency || 0) * 1000);
    L.clock = 'timestamp';
    L.addedLatencyMs = Math.round(add * 100) / 100;
    return { c: ts.contextTime, p: ts.performanceTime + add, real: true };
  }
  const lat = (actx.outputLatency || 0) + (actx.baseLatency || 0);
  // The run-ahead now: about 0 until the sound starts (it starts heard at the floor's pace, then
  // the clock jumps ahead and the rest is heard that much later), so a start is planned right too.
  const ahead = unreportedLatencyMs(floorMs, cur * 1000 - now, (actx.outputLatency || 0) * 1000);
  L.clock = 'fallback';
  L.runAheadMs = Math.round(ahead * 100) / 100;
  L.addedLatencyMs = Math.round((lat * 1000 + ahead) * 100) / 100;
  return { c: cur, p: now + lat * 1000 + ahead, real: false };
}
function ctxToDjUs(ts, c) { return (performance.timeOrigin + ts.p + (c - ts.c) * 1000) * 1000 + djOffset(); }
function djOffset() { return offsetUs === null ? roughOffsetUs : offsetUs; }
function trackEnd() {
  const d = S && S.now && S.now.duration_ms ? S.now.duration_ms / 1000 : Infinity;
  return Math.min(d, buf ? buf.duration : 0);
}
function stopSource() {
  if (src) { try { src.stop(); } catch (e) { /* not started */ } src.disconnect(); }
  src = null; seg = null;
}
function setListenButton() {
  text($('listen'), L.state === 'off' ? 'Listen' : 'Stop listening');
}
function syncText(t) { text($('sync'), t); }
// The audio clock's pace against performance.now() (ms), the run-ahead taken out: steady unless it stalls.
function pace() { return actx.currentTime * 1000 - performance.now() - L.runAheadMs; }
function startSource() {
  const ts = outTs();
  const startC = actx.currentTime + 0.15;
  // startBias: what the first measurement after earlier starts found, so the next start lands closer.
  const pos = stationPosUs(S, ctxToDjUs(ts, startC)) / 1e6 - startBias / 1000;
  if (pos >= trackEnd() - 0.05) { syncText('track ended'); return; }
  const rate = (S.anchor && S.anchor.rate) || 1;
  nudge = 1;
  src = actx.createBufferSource();
  src.buffer = buf;
  src.playbackRate.value = rate;
  src.connect(actx.destination);
  src.start(startC, pos);
  seg = { c: startC, off: pos, rate, id: S.now.id, fresh: true, pace: pace() };
  L.restarts++;
  L.startBiasMs = Math.round(startBias * 100) / 100;
}
async function load(n) {
  loadingId = n.id;
  L.state = 'loading';
  syncText('loading…');
  try {
    const r = await fetch(n.media, { cache: 'no-store', credentials: 'same-origin' });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const data = await r.arrayBuffer();
    const b = await actx.decodeAudioData(data);
    if (loadingId !== n.id || L.state === 'off') return;
    buf = b; bufId = n.id;
    L.state = 'playing';
    tick();
  } catch (e) {
    if (loadingId === n.id) { syncText('cannot play this track here (' + e.message + ')'); L.state = 'unsupported'; }
  } finally {
    if (loadingId === n.id) loadingId = null;
  }
}

// ---- live stations ----
// A live station (now.live) has no file: its Opus frames come from GET /api/live (docs/WEB.md), are
// decoded with WebCodecs' AudioDecoder and each is scheduled to be heard at the station time its
// first sample was taken plus the station's delay, less the codec's lookahead (the decoded audio of
// a frame starts 312 samples before its stamp: docs/LIVE.md). Frames scheduled back to back from an
// anchor, so that they join without a click; the anchor moves (a re-anchor) when the station time it
// gives strays more than LIVE.reanchorMs from the output clock's. A frame that never came, or came too
// late for its time, is silence, counted.
const LIVE = { codecDelayUs: 312 * 1000 / 48, maxExtraMs: 1000, defaultDelayMs: 60, reanchorMs: 5, marginS: 0.003, gapFrames: 20 };
// When a frame's decoded audio must be heard, on the station clock (µs).
function liveDueUs(firstSampleUs, delayMs) { return firstSampleUs + delayMs * 1000 - LIVE.codecDelayUs; }
// The context time heard at station time djUs, from an output timestamp {c, p} (context time c heard
// at performance time p, ms) and the DJ clock's offset (µs).
function djUsToCtx(ts, djUs, offUs, timeOriginMs) { return ts.c + ((djUs - offUs) / 1000 - timeOriginMs - ts.p) / 1000; }
// Where a frame starts on the context clock: on from the anchor {us, ctx} by its station time, unless
// that is more than reanchorMs from where the clock says (then the frame is the new anchor). Pure.
function livePlace(anchor, firstSampleUs, idealCtx) {
  if (anchor) {
    const ctx = anchor.ctx + (firstSampleUs - anchor.us) / 1e6;
    if (Math.abs(ctx - idealCtx) * 1000 <= LIVE.reanchorMs) return { anchor, ctx, reanchored: false };
  }
  return { anchor: { us: firstSampleUs, ctx: idealCtx }, ctx: idealCtx, reanchored: true };
}
// Records of GET /api/live: type u8, length u16, body. Pure: bytes in, records and the rest out.
function liveRecords(bytes) {
  const out = [], dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  while (i + 3 <= bytes.length) {
    const type = dv.getUint8(i), len = dv.getUint16(i + 1);
    if (i + 3 + len > bytes.length) break;
    const b = i + 3;
    if (type === 1 && len >= 22) {
      const n = dv.getUint16(b + 20);
      if (22 + n <= len) out.push({ type, seq: Number(dv.getBigUint64(b)), firstUs: Number(dv.getBigInt64(b + 8) / 1000n),
        delayMs: dv.getUint16(b + 16), codec: dv.getUint8(b + 18), durUs: dv.getUint8(b + 19) * 2500,
        packet: bytes.slice(b + 22, b + 22 + n) });
    } else if (type === 2 && len >= 2) {
      out.push({ type, delayMs: dv.getUint16(b) });
    } else {
      out.push({ type });
    }
    i = b + len;
  }
  return { records: out, rest: bytes.slice(i) };
}
// Without WebCodecs (any plain http page: docs/WEB.md, "Without WebCodecs"), the frames are wrapped
// into short Ogg Opus streams (RFC 7845 in RFC 3533 pages) and decoded with decodeAudioData, which
// every engine has on an insecure page too. A fresh decoder needs history to converge (libopus
// predicts each frame's band energies from the previous one's), so each chunk of `keep` frames
// carries the `preroll` frames before it, whose output is dropped: the kept PCM then joins the last
// chunk's as a continuous decode would. Pure functions, for the browser tests.
const OGG = { keep: 2, preroll: 16, preSkip: 312, decodeMs: 10, serial: 0x70617274 };
L.OGG = OGG;
const OGG_CRC = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = (r & 0x80000000) ? (r << 1) ^ 0x04C11DB7 : r << 1;
    t[i] = r >>> 0;
  }
  return t;
})();
// CRC-32 of an Ogg page (RFC 3533): polynomial 0x04C11DB7, not reflected, initial 0, no final xor.
function oggCrc(bytes) {
  let c = 0;
  for (let i = 0; i < bytes.length; i++) c = ((c << 8) ^ OGG_CRC[((c >>> 24) ^ bytes[i]) & 255]) >>> 0;
  return c;
}
// One Ogg page holding whole packets: flags (2: first, 4: last), granule position, page number.
function oggPage(flags, granule, serial, pageNo, packets) {
  const lacing = [];
  for (const p of packets) {
    for (let n = p.length; ; n -= 255) { lacing.push(Math.min(n, 255)); if (n < 255) break; }
  }
  const size = packets.reduce((a, p) => a + p.length, 0);
  const page = new Uint8Array(27 + lacing.length + size), dv = new DataView(page.buffer);
  page.set([0x4f, 0x67, 0x67, 0x53], 0);  // "OggS", version 0
  dv.setUint8(5, flags);
  dv.setBigInt64(6, BigInt(granule), true);
  dv.setUint32(14, serial, true);
  dv.setUint32(18, pageNo, true);
  dv.setUint8(26, lacing.length);
  page.set(lacing, 27);
  let at = 27 + lacing.length;
  for (const p of packets) { page.set(p, at); at += p.length; }
  dv.setUint32(22, oggCrc(page), true);  // computed with the CRC field at 0
  return page;
}
// An Ogg Opus stream (RFC 7845, stereo, 48 kHz) of frames [{packet, samples}]: OpusHead with
// `preSkip`, OpusTags, then a page per packet, each with the samples decoded up to its end.
function oggOpus(frames, preSkip) {
  const head = new Uint8Array(19), hv = new DataView(head.buffer);
  head.set([0x4f, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64, 1, 2], 0);  // "OpusHead", version 1, 2 channels
  hv.setUint16(10, preSkip, true);
  hv.setUint32(12, 48000, true);  // output gain 0, mapping family 0
  const vendor = [0x70, 0x61, 0x72, 0x74, 0x79, 0x72, 0x61, 0x64, 0x69, 0x6f];  // "partyradio"
  const tags = new Uint8Array(8 + 4 + vendor.length + 4), tv = new DataView(tags.buffer);
  tags.set([0x4f, 0x70, 0x75, 0x73, 0x54, 0x61, 0x67, 0x73], 0);  // "OpusTags"
  tv.setUint32(8, vendor.length, true);
  tags.set(vendor, 12);  // no comments
  const pages = [oggPage(2, 0, OGG.serial, 0, [head]), oggPage(0, 0, OGG.serial, 1, [tags])];
  let granule = 0;
  frames.forEach((f, i) => {
    granule += f.samples;
    pages.push(oggPage(i === frames.length - 1 ? 4 : 0, granule, OGG.serial, 2 + i, [f.packet]));
  });
  const out = new Uint8Array(pages.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of pages) { out.set(p, at); at += p.length; }
  return out;
}
// The chunk to decode once `keep` frames wait: the waiting frames and up to `preroll` frames before
// them, from `history` (consecutive frames, oldest first, the waiting ones last). What to keep of
// the decoded PCM: its last keepSamples (the pre-roll's output and the pre-skip come first).
function oggChunk(history, keep, preroll) {
  const kept = history.slice(-keep), pre = history.slice(Math.max(0, history.length - keep - preroll), history.length - keep);
  return { frames: pre.concat(kept), kept, keepSamples: kept.reduce((a, f) => a + f.samples, 0) };
}
// Where the kept PCM starts in a decoded buffer of `length` samples, and how much of it there is:
// the end of the buffer is the end of the last frame; a decoder that gave less than keepSamples (a
// first chunk without pre-roll loses the pre-skip) leaves its start that much later.
function oggKeep(length, keepSamples) {
  const n = Math.min(length, keepSamples);
  return { from: length - n, count: n, lateSamples: keepSamples - n };
}
// What the chunks cost in delay: the first kept frame waits for the others to come, then the decode.
function oggExtraMs(keep, frameMs) { return (keep - 1) * frameMs + OGG.decodeMs; }
// Which decoder plays a live station here: WebCodecs where the page has it (a secure page: https or
// localhost), else Ogg Opus through decodeAudioData (every plain http page on the LAN).
async function liveDecoder() {
  if (typeof window.AudioDecoder === 'function' && typeof window.EncodedAudioChunk === 'function') {
    try {
      const r = await AudioDecoder.isConfigSupported({ codec: 'opus', sampleRate: 48000, numberOfChannels: 2 });
      if (r && r.supported) return 'webcodecs';
    } catch (e) { /* not supported */ }
  }
  return actx && typeof actx.decodeAudioData === 'function' ? 'ogg' : null;
}
const LIVE_NO_DECODER = 'This browser cannot decode a live station (no Opus in WebCodecs or in decodeAudioData); listen with the partyradio app.';
let lv = null;
function liveFigures() {
  return { state: 'off', decoder: null, bytes: 0, extraMs: 0, latencyHint: null, received: 0, decoded: 0, scheduled: 0, late: 0, concealed: 0, reanchors: 0, delayMs: null,
    chunks: 0, chunkFails: 0, extraSteps: [], errorsMs: [], plans: [], reason: null };
}
function stopLive() {
  if (!lv) return;
  lv.stopped = true;
  try { lv.abort.abort(); } catch (e) { /* gone */ }
  try { if (lv.decoder && lv.decoder.state !== 'closed') lv.decoder.close(); } catch (e) { /* closed */ }
  for (const s of lv.sources) { try { s.stop(); } catch (e) { /* not started */ } }
  lv = null;
  L.live.state = 'off';
}
async function startLive() {
  if (lv) return;
  const run = lv = { stopped: false, abort: new AbortController(), decoder: null, kind: null, sources: new Set(), anchor: null,
    lastSeq: null, seqOf: new Map(), delayMs: LIVE.defaultDelayMs, extraMs: 0, lateRun: [], history: [], waiting: 0,
    oggOk: false, costSaid: false };
  L.live.state = 'starting';
  const kind = await liveDecoder();
  if (run.stopped) return;
  if (!kind) {
    L.live.state = 'unsupported'; L.live.reason = LIVE_NO_DECODER; L.state = 'unsupported'; syncText(LIVE_NO_DECODER);
    lv = null;
    return;
  }
  run.kind = kind; L.live.decoder = kind;
  L.state = 'playing';
  syncText('live: connecting…');
  if (kind === 'webcodecs') {
    run.decoder = new AudioDecoder({ output: (d) => liveOutput(run, d), error: (e) => { L.live.reason = String(e); } });
    run.decoder.configure({ codec: 'opus', sampleRate: 48000, numberOfChannels: 2 });
  }
  while (!run.stopped) {
    try {
      const r = await fetch('/api/live', { cache: 'no-store', credentials: 'same-origin', signal: run.abort.signal });
      if (!r.ok || !r.body) throw new Error('HTTP ' + r.status);
      L.live.state = 'playing';
      const reader = r.body.getReader();
      let rest = new Uint8Array(0);
      for (;;) {
        const { value, done } = await reader.read();
        if (done || run.stopped) break;
        L.live.bytes += value.length;
        const all = new Uint8Array(rest.length + value.length);
        all.set(rest); all.set(value, rest.length);
        const got = liveRecords(all);
        rest = got.rest;
        for (const rec of got.records) liveRecord(run, rec);
      }
    } catch (e) {
      if (run.stopped) return;
      syncText('live: reconnecting…');
    }
    run.anchor = null; run.lastSeq = null; run.history = []; run.waiting = 0;
    if (!run.stopped) await new Promise((res) => setTimeout(res, 1000));
  }
}
function liveRecord(run, rec) {
  if (rec.type === 2) { run.delayMs = rec.delayMs; L.live.delayMs = rec.delayMs; return; }
  if (rec.type !== 1 || rec.codec !== 1) return;
  if (run.kind === 'webcodecs' && run.decoder.state !== 'configured') return;
  L.live.received++;
  run.delayMs = rec.delayMs; L.live.delayMs = rec.delayMs;  // every frame says the station's delay
  if (run.lastSeq !== null && rec.seq > run.lastSeq + 1) {
    const missing = rec.seq - run.lastSeq - 1;
    // A short gap is concealed with silence; a long one is a new stream (the DJ's source came back).
    if (missing < LIVE.gapFrames) L.live.concealed += missing; else run.anchor = null;
    // The pre-roll must be the frames just before: after a gap the next chunk has less of it.
    run.history = []; run.waiting = 0;
  }
  if (run.lastSeq !== null && rec.seq <= run.lastSeq) return;
  run.lastSeq = rec.seq;
  if (run.kind === 'ogg') { liveOggFrame(run, rec); return; }
  run.seqOf.set(rec.firstUs, rec.seq);
  if (run.seqOf.size > 200) run.seqOf.delete(run.seqOf.keys().next().value);
  run.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp: rec.firstUs, duration: rec.durUs, data: rec.packet }));
}
// The Ogg path: every OGG.keep frames, a chunk with its pre-roll to decodeAudioData.
function liveOggFrame(run, rec) {
  if (!run.costSaid) {
    // The chunks' own cost, said from the first frame (its length sets it): the page plays this much
    // behind the station.
    run.costSaid = true;
    run.extraMs += oggExtraMs(OGG.keep, rec.durUs / 1000);
    L.live.extraMs = Math.round(run.extraMs);
    push(L.live.extraSteps, { ms: L.live.extraMs, received: L.live.received, late: L.live.late });
  }
  run.history.push({ packet: rec.packet, samples: rec.durUs * 48 / 1000, seq: rec.seq, firstUs: rec.firstUs });
  if (run.history.length > OGG.keep + OGG.preroll) run.history.shift();
  if (++run.waiting < OGG.keep) return;
  run.waiting = 0;
  const chunk = oggChunk(run.history, OGG.keep, OGG.preroll);
  const bytes = oggOpus(chunk.frames, OGG.preSkip);
  L.live.chunks++;
  const ok = (b) => {
    run.oggOk = true;
    const k = oggKeep(b.length, chunk.keepSamples * b.sampleRate / 48000);
    liveSchedule(run, chunk.kept, b.numberOfChannels, b.sampleRate, k.count, (plane, ch) => {
      plane.set(b.getChannelData(Math.min(ch, b.numberOfChannels - 1)).subarray(k.from, k.from + k.count));
    }, k.lateSamples / b.sampleRate);
  };
  const fail = (e) => {
    L.live.chunkFails++;
    L.live.reason = String(e);
    // Not one chunk decoded, ever: this browser has no Opus in decodeAudioData either.
    if (!run.oggOk && L.live.chunkFails >= 5 && lv === run) {
      stopLive(); L.live.state = 'unsupported'; L.live.reason = LIVE_NO_DECODER; L.state = 'unsupported'; syncText(LIVE_NO_DECODER);
    }
  };
  try {
    const p = actx.decodeAudioData(bytes.buffer, (b) => { if (!run.stopped && actx) ok(b); }, fail);
    if (p && p.catch) p.catch(() => { /* the callback counted it */ });
  } catch (e) { fail(e); }
}
function liveOutput(run, d) {
  try {
    if (run.stopped || !actx) return;
    liveSchedule(run, [{ firstUs: d.timestamp, seq: run.seqOf.get(d.timestamp), samples: d.numberOfFrames }],
      d.numberOfChannels, d.sampleRate, d.numberOfFrames, (plane, ch) => {
        d.copyTo(plane, { planeIndex: Math.min(ch, d.numberOfChannels - 1), format: 'f32-planar' });
      }, 0);
  } finally {
    d.close();
  }
}
// Schedules decoded PCM: `frames` (their station times, numbers, samples at 48 kHz) whose audio is
// `n` samples at `rate`, starting `skipS` seconds after the first frame's due time; `fill` copies a
// channel into a plane.
function liveSchedule(run, frames, channels, rate, n, fill, skipS) {
  L.live.decoded += frames.length;
  const first = frames[0].firstUs;
  const ts = outTs();
  const due = liveDueUs(first, run.delayMs + run.extraMs);
  const ideal = djUsToCtx(ts, due, djOffset(), performance.timeOrigin);
  const placed = livePlace(run.anchor, first, ideal);
  if (placed.reanchored && run.anchor) L.live.reanchors++;
  run.anchor = placed.anchor;
  if (placed.ctx < actx.currentTime + LIVE.marginS) {
    // Too late for its time. A few in a row and the output cannot be heard by then at all (its
    // latency is beyond the station's delay): the page plays that much later, and says so.
    L.live.late += frames.length;
    run.anchor = null;
    for (let i = 0; i < frames.length; i++) run.lateRun.push((actx.currentTime + LIVE.marginS - placed.ctx) * 1000);
    if (run.lateRun.length >= 10) {
      run.extraMs = Math.min(LIVE.maxExtraMs, run.extraMs + Math.max(...run.lateRun) + 10);
      L.live.extraMs = Math.round(run.extraMs);
      push(L.live.extraSteps, { ms: L.live.extraMs, received: L.live.received, late: L.live.late });
      run.lateRun = [];
    }
    return;
  }
  run.lateRun = [];
  if (n > 0) {
    const b = actx.createBuffer(2, n, rate);
    for (let ch = 0; ch < 2; ch++) {
      const plane = new Float32Array(n);
      fill(plane, ch);
      b.copyToChannel(plane, ch);
    }
    const s = actx.createBufferSource();
    s.buffer = b;
    s.connect(actx.destination);
    s.onended = () => { run.sources.delete(s); s.disconnect(); };
    run.sources.add(s);
    s.start(placed.ctx + skipS);
  }
  let at = placed.ctx, us = first;
  for (const f of frames) {
    // Each frame's plan: where its first sample is heard (epoch µs, the output timestamp's clock).
    const frameIdeal = ideal + (us - first) / 1e6;
    L.live.scheduled++;
    push(L.live.errorsMs, Math.round((at - frameIdeal) * 1e6) / 1000);
    push(L.live.plans, { seq: f.seq, heardUs: Math.round((performance.timeOrigin + ts.p + (at - ts.c) * 1000) * 1000),
      firstUs: f.firstUs, extraMs: run.extraMs });
    at += f.samples / 48000; us += f.samples * 1000 / 48;
  }
  if (L.live.scheduled % 25 < frames.length) {
    L.live.outputLatencyMs = Math.round(((actx.outputLatency || 0) + (actx.baseLatency || 0)) * 1e5) / 100;
    const recent = L.live.errorsMs.slice(-50);
    const avg = recent.reduce((a, x) => a + Math.abs(x), 0) / recent.length;
    syncText(run.extraMs > 0 ? 'live, ' + Math.round(run.extraMs) + ' ms behind the station (' +
      (run.kind === 'ogg' ? 'this page decodes without WebCodecs, in chunks' : 'this browser\'s output is slower') + ')'
      : 'live, in sync ±' + Math.max(1, Math.round(avg)) + ' ms');
  }
}
function tick() {
  if (L.state === 'off' || !actx) return;
  const n = S && S.now;
  if (n && n.live === true) {
    stopSource();
    if (!lv && L.live.state !== 'unsupported') startLive();
    return;
  }
  stopLive();
  if (!n || S.paused) { stopSource(); syncText(n ? 'paused' : 'nothing playing'); return; }
  if (!samePath(n.media, '/media/')) {
    stopSource(); L.state = 'unsupported'; syncText('This track cannot play in the browser'); return;
  }
  if (bufId !== n.id) {
    stopSource();
    if (loadingId !== n.id) load(n);
    return;
  }
  if (L.state !== 'playing') L.state = 'playing';
  if (!src) { startSource(); return; }
  const ts = outTs();
  L.outputTimestamp = { contextTime: ts.c, performanceTime: ts.p, real: ts.real };
  if (ts.c < seg.c) return;
  const bufPos = seg.off + (ts.c - seg.c) * seg.rate;
  const djUs = ctxToDjUs(ts, ts.c), st = stationPosUs(S, djUs) / 1e6;
  const errMs = (bufPos - st) * 1000;
  push(L.errorsMs, Math.round(errMs * 100) / 100);
  push(L.samples, { perfUs: Math.round((performance.timeOrigin + ts.p) * 1000), positionUs: Math.round(bufPos * 1e6),
    trackId: seg.id });
  if (bufPos >= trackEnd() || st >= trackEnd() - 0.01) { stopSource(); syncText('track ended'); return; }
  if (seg.fresh) {
    // A start measured across a stall of the audio clock (WebKitGTK's stalls up to 350 ms as a sound
    // starts on a busy machine, then catches up) says nothing about where starts land: measured once
    // more, half a second on, before it restarts anything; and it teaches the start nothing.
    const steady = Math.abs(pace() - seg.pace) < 10;
    if (!steady && !seg.again) { seg.again = true; seg.pace = pace(); return; }
    seg.fresh = false;
    if (Math.abs(errMs) < 100 && steady) startBias = Math.max(-50, Math.min(50, startBias + errMs / 2));
  }
  if (Math.abs(errMs) > 25) { stopSource(); startSource(); syncText('syncing…'); return; }
  // Correct the error over about three seconds, never more than half a percent off the station's rate.
  nudge = Math.min(1.005, Math.max(0.995, 1 - errMs / 3000));
  const base = (S.anchor && S.anchor.rate) || 1, now = actx.currentTime;
  seg = { c: now, off: seg.off + (now - seg.c) * seg.rate, rate: base * nudge, id: seg.id, fresh: false };
  src.playbackRate.setValueAtTime(base * nudge, now);
  const recent = L.errorsMs.slice(-10);
  const avg = recent.reduce((s, x) => s + Math.abs(x), 0) / recent.length;
  syncText('in sync ±' + Math.max(1, Math.round(avg)) + ' ms');
}
let lastAnchor = '';
function listenStateChanged(old) {
  const a = S && S.anchor ? [S.anchor.at_us, S.anchor.position_us, S.anchor.rate, S.paused, S.now && S.now.id].join() : '';
  if (a !== lastAnchor) {
    lastAnchor = a;
    if (old && S && S.now && src && seg && seg.id === S.now.id) stopSource();
    tick();
  }
}
// A page that plays counts among the listeners while it says so (the DJ forgets it 3.5 s
// after it stops saying so).
setInterval(() => { if (L.state === 'playing' || L.state === 'loading') post('/api/listen', { state: 'on' }); }, 1500);
$('listen').addEventListener('click', async () => {
  if (L.state !== 'off') {
    post('/api/listen', { state: 'off' });
    L.state = 'off'; stopSource(); stopLive(); loadingId = null; syncText('');
    if (actx) actx.suspend();
    setListenButton();
    return;
  }
  const AC = window.AudioContext || window.webkitAudioContext;
  if (!AC) { L.state = 'unsupported'; syncText('This browser cannot play audio here'); return; }
  // A live station is heard its delay (60 ms) after it is sampled: its context asks for the
  // shortest output the browser has; files are planned ahead and take the steadier 'playback'.
  const hint = S && S.now && S.now.live === true ? 'interactive' : 'playback';
  if (actx && actx.prHint !== hint) { try { actx.close(); } catch (e) { /* closed */ } actx = null; buf = null; bufId = null; }
  if (!actx) {
    // A live station's PCM is 48 kHz: a context at that rate takes each chunk as decoded (a context
    // at another rate would resample every chunk on its own, with a seam at each join).
    try { actx = new AC(hint === 'interactive' ? { latencyHint: hint, sampleRate: 48000 } : { latencyHint: hint }); } catch (e) { actx = null; }
    if (!actx) actx = new AC({ latencyHint: hint });
    actx.prHint = hint;
  }
  trust = null; lags = []; idle = []; floorMs = null;
  L.live = liveFigures();
  L.live.latencyHint = hint;
  try { await actx.resume(); } catch (e) { /* resumes on the next click */ }
  L.state = 'loading';
  post('/api/listen', { state: 'on' });
  setListenButton();
  probeN = 0;
  for (let i = 0; i < 4; i++) await probe();
  tick();
});
setInterval(tick, 500);

loadState();
openEvents();
probeLoop();
renderYou();
})();
