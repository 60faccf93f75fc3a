#!/usr/bin/python3
"""Drive partyradio's web page (docs/WEB.md) in a real browser, one step at a time, for the tests.

Three engines, the three that guests carry (`--engine`):
  chromium  headless Chromium through chromedriver (Debian's chromium, chromium-driver, python3-selenium);
            needs no display and no D-Bus.
  webkit    WebKitGTK's MiniBrowser through WebKitWebDriver and selenium's remote driver (Debian's
            webkit2gtk-driver): needs a display and a session bus, so run it under
            `xvfb-run -a dbus-run-session -- /usr/bin/python3 browser.py --engine webkit ...`.
  firefox   headless Firefox ESR (Debian's firefox-esr; Debian has no geckodriver) over its built-in
            WebDriver BiDi, spoken here over a websocket (python3-websocket).
None needs the internet, so each runs inside a testbed namespace (`ip netns exec HOST /usr/bin/python3 …`).
WebKit and Firefox play sound through PulseAudio when PULSE_SERVER points at one.

    /usr/bin/python3 Tests/Fixtures/web/browser.py --url http://10.99.X.1:PORT/ [--engine chromium]
        [--width 360|1280] [--height H] [--name GUEST] [--screenshot-scale 1] [--color-scheme light|dark]
        [--timeout 60] [--secure-origin]

Protocol: one JSON object per line. On start it opens the page, waits for its first state, sets the
name when --name is given, and prints {"ready": true, ...} (or {"ready": false, "error": "..."} and exits
1). Then each line read from stdin is a command and gets exactly one JSON line back: the command's
answer, or {"error": "..."} (the driver keeps going). Every answer carries "ok": true unless it is an
error. End of input or {"cmd": "quit"} closes the browser.

Commands:
  {"cmd":"state"}                       the page's visible state (texts), listen figures, csp_errors
  {"cmd":"click","name":"Vote up","timeout":10}   click the visible, enabled button/link whose
                                        accessible name (aria-label, else its text) is exactly NAME
  {"cmd":"fill","label":"Seek to seconds","text":"30","submit":true}   type into the input with
                                        that aria-label (or placeholder); submit its form when asked
  {"cmd":"slide","label":"Volume of Kitchen","value":30}   move the slider with that aria-label to
                                        VALUE from the keyboard (Home, then the right arrow) -> value
  {"cmd":"wait_text","text":"…","timeout":10}   until the page's visible text contains it -> elapsed_ms
  {"cmd":"wait_gone","text":"…","timeout":10}   until it no longer does -> elapsed_ms
  {"cmd":"wait_vote","up":N,"down":M,"timeout":10}   until the now-playing tally shows N and M
  {"cmd":"request","search":"words","pick":0,"timeout":10}   search, press "Request" on result PICK,
                                        -> {"results": [texts], "message": "...", "refused": bool}
  {"cmd":"chat","text":"…"}             send a chat line -> {"message": "...", "refused": bool}
  {"cmd":"set_name","name":"…"}         -> {"message": "...", "refused": bool, "you": "..."}
  {"cmd":"screenshot","path":"/x.png","full":true}   PNG of the whole page (or the viewport)
  {"cmd":"eval","js":"return …"}        run JS in the page, -> {"value": ...}
  {"cmd":"listen","seconds":N,"samples":false}   press Listen (when not listening), wait N s, ->
                                        window.partyradioListen plus a summary of errorsMs, and the
                                        engine's own audio clock readings taken meanwhile ("readings":
                                        performance.now(), currentTime, getOutputTimestamp(),
                                        outputLatency, baseLatency every 100 ms, read by this driver)
  {"cmd":"stop_listening"}              press "Stop listening"
  {"cmd":"injection_check"}             -> {"pwned": bool, "scripts": n, "bad": [...], "clean": bool}
  {"cmd":"open","url":"…"}              load another URL (e.g. with #dj=TOKEN) and wait for state
  {"cmd":"reload"}                      reload the page and wait for state
  {"cmd":"console"}                     the browser console lines seen so far
  {"cmd":"quit"}
"""
import argparse
import atexit
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

CHROMIUM = '/usr/lib/chromium/chromium' if os.path.exists('/usr/lib/chromium/chromium') else '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
WEBKITDRIVER = '/usr/bin/WebKitWebDriver'
MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser'
FIREFOX = '/usr/bin/firefox-esr'

# Runs before the page's own script (Chromium: through DevTools; Firefox: a BiDi preload script; so the
# page's CSP does not apply to it and it adds no <script> element): records CSP violations and script
# errors so "state" can report them. WebKit's driver has no way to run it first: it runs once the page
# has loaded there (script errors while loading then show as a page that never gets its first state).
PRELUDE = r"""
if (!window.__cspViolations) {
  window.__cspViolations = [];
  window.__scriptErrors = [];
  document.addEventListener('securitypolicyviolation', function (e) {
    window.__cspViolations.push({directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample,
      line: e.lineNumber});
  });
  window.addEventListener('error', function (e) {
    window.__scriptErrors.push(String(e.message) + ' at ' + e.lineno + ':' + e.colno);
  });
  window.addEventListener('unhandledrejection', function (e) {
    window.__scriptErrors.push('unhandled rejection: ' + String(e.reason));
  });
}
"""

# Before "Listen" is pressed the first time: the AudioContext the page makes is kept where this driver
# reads the engine's own audio clock every 100 ms (the page's figures are the page's; these are the
# browser's, to check the page against).
READINGS_JS = r"""
if (!window.__prReadings) {
  window.__prReadings = [];
  window.__prCtx = null;
  const Original = window.AudioContext || window.webkitAudioContext;
  if (Original) {
    const Kept = function (options) { const c = new Original(options); window.__prCtx = c; return c; };
    Kept.prototype = Original.prototype;
    window.AudioContext = Kept;
    if (window.webkitAudioContext) window.webkitAudioContext = Kept;
  }
  setInterval(function () {
    const c = window.__prCtx;
    if (!c || c.state !== 'running') return;
    const ts = c.getOutputTimestamp ? c.getOutputTimestamp() : {};
    window.__prReadings.push({now: performance.now(), current: c.currentTime, contextTime: ts.contextTime,
      performanceTime: ts.performanceTime, outputLatency: c.outputLatency, baseLatency: c.baseLatency});
    if (window.__prReadings.length > 3000) window.__prReadings.shift();
  }, 100);
}
"""

STATE_JS = r"""
const $ = (id) => document.getElementById(id);
const t = (id) => { const e = $(id); return e ? e.textContent.trim() : null; };
const vis = (e) => !!e && !e.hidden && e.getClientRects().length > 0;
const items = (id) => $(id) ? Array.from($(id).children).filter((li) => !li.classList.contains('empty'))
  .map((li) => li.innerText.replace(/\s+/g, ' ').trim()) : [];
const msg = (id) => ({text: t(id), refused: !!$(id) && $(id).classList.contains('err')});
const L = window.partyradioListen || null;
const art = $('art');
return {
  station: t('station'), title: t('title'), artist: t('artist'), album: t('album'),
  up: parseInt(t('up'), 10), down: parseInt(t('down'), 10), listeners: parseInt(t('listeners'), 10),
  elapsed: t('elapsed'), total: t('total'), paused: t('pstate') === 'paused',
  progress: $('bar') ? $('bar').style.width : null,
  vote_pressed: {up: $('vup') && $('vup').getAttribute('aria-pressed') === 'true',
                 down: $('vdown') && $('vdown').getAttribute('aria-pressed') === 'true'},
  artwork: art && !art.hidden ? art.getAttribute('src') : null,
  queue: items('queue'), chat: items('chat'), results: items('results'),
  you: t('me'), reconnecting: vis($('conn')), dj_panel: vis($('djpanel')),
  listen_button: t('listen'), sync: t('sync'),
  messages: {vote: msg('vmsg'), queue: msg('qmsg'), search: msg('smsg'), chat: msg('cmsg'), name: msg('nmsg'),
             dj: msg('djmsg')},
  listen: L ? {state: L.state, clockRttMs: L.clockRttMs, offsetUs: L.offsetUs, restarts: L.restarts,
               errors: L.errorsMs.length, lastErrorsMs: L.errorsMs.slice(-10)} : null,
  width: window.innerWidth, csp_violations: window.__cspViolations || [],
};
"""

FIND_JS = r"""
const want = arguments[0];
const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
const els = document.querySelectorAll('button, a[href], [role=button], input[type=submit], input[type=button]');
for (const e of els) {
  const name = e.hasAttribute('aria-label') ? norm(e.getAttribute('aria-label'))
    : norm(e.tagName === 'INPUT' ? e.value : e.textContent);
  if (name === want && !e.disabled && !e.closest('[hidden]') && e.getClientRects().length) return e;
}
return null;
"""

INJECTION_JS = r"""
const bad = [];
const scripts = document.querySelectorAll('script').length;
if (scripts !== 1) bad.push('script elements: ' + scripts);
for (const e of document.querySelectorAll('*')) {
  for (const a of e.attributes) {
    if (/^on/i.test(a.name)) bad.push(e.tagName.toLowerCase() + ' has ' + a.name);
    if (/^\s*javascript:/i.test(a.value) && /^(href|src|action|formaction|xlink:href)$/i.test(a.name))
      bad.push(e.tagName.toLowerCase() + ' ' + a.name + '=javascript:');
  }
}
const ids = ['art', 'qr', 'djqr'];
for (const i of document.querySelectorAll('img')) if (!ids.includes(i.id)) bad.push('foreign img');
for (const tag of ['iframe', 'object', 'embed', 'svg', 'math', 'form[action]', 'base', 'link', 'meta[http-equiv]'])
  if (document.querySelector(tag)) bad.push('element ' + tag);
return {pwned: !!window.__pwned, scripts: scripts, bad: bad, clean: !window.__pwned && bad.length === 0};
"""


# How long a command waits for what it waits for, unless told: generous, for a loaded machine (a
# wait ends as soon as what it waits for is there).
WAIT = 30


class Fail(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Fail('%s exited (%s)' % (what, proc.returncode))
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise Fail('%s did not listen on port %d within %.0f s' % (what, port, timeout))


class FirefoxElement:
    """An element of the page, as the Firefox driver hands it out (an index into window.__prEls)."""

    def __init__(self, driver, index):
        self.driver, self.index = driver, index

    def click(self):
        # A real click (input.performActions) where the element is, so that the page gets a user
        # gesture; a script's click when something else covers that point.
        at = self.driver.execute_script(
            "const e = arguments[0]; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            "const x = r.left + r.width / 2, y = r.top + r.height / 2, hit = document.elementFromPoint(x, y);"
            "return hit && (hit === e || e.contains(hit)) ? [Math.round(x), Math.round(y)] : null;", self)
        if at is None:
            self.driver.execute_script('arguments[0].click()', self)
            return
        self.driver.send('input.performActions', {'context': self.driver.context, 'actions': [{
            'type': 'pointer', 'id': 'mouse', 'parameters': {'pointerType': 'mouse'}, 'actions': [
                {'type': 'pointerMove', 'x': at[0], 'y': at[1]}, {'type': 'pointerDown', 'button': 0},
                {'type': 'pointerUp', 'button': 0}]}]})
        self.driver.send('input.releaseActions', {'context': self.driver.context})


class FirefoxBiDi:
    """Headless Firefox driven over WebDriver BiDi, with the few calls of selenium's driver the commands
    use (execute_script, get, refresh, current_url, save_screenshot, quit). Scripts' results travel as
    JSON; elements as indexes into a page array (FirefoxElement)."""

    CALL = r"""(json) => {
  const els = window.__prEls || (window.__prEls = []);
  const revive = (v) => v && typeof v === 'object' && typeof v.__el === 'number' ? els[v.__el] : v;
  const args = JSON.parse(json).map(revive);
  const result = (function () { %s
  }).apply(null, args);
  const out = JSON.stringify(result, (k, v) => {
    if (v instanceof Element) { els.push(v); return {__el: els.length - 1}; }
    if (v instanceof NodeList || v instanceof HTMLCollection) return Array.from(v);
    return v;
  });
  return out === undefined ? 'null' : out;
}"""

    def __init__(self, args, tmp, console):
        import websocket
        self.console, self.next_id = console, 0
        profile = os.path.join(tmp, 'profile')
        os.makedirs(profile)
        prefs = {
            'media.autoplay.default': 0, 'media.autoplay.blocking_policy': 0,
            'browser.shell.checkDefaultBrowser': False, 'browser.startup.homepage_override.mstone': 'ignore',
            'datareporting.policy.dataSubmissionEnabled': False, 'toolkit.telemetry.reportingpolicy.firstRun': False,
            'app.update.disabledForTesting': True, 'browser.aboutwelcome.enabled': False,
            'network.captive-portal-service.enabled': False, 'network.connectivity-service.enabled': False,
            'extensions.update.enabled': False, 'browser.safebrowsing.update.enabled': False,
            'browser.region.network.url': '', 'browser.search.geoip.url': '',
        }
        with open(os.path.join(profile, 'user.js'), 'w') as f:
            for k, v in prefs.items():
                f.write('user_pref(%s, %s);\n' % (json.dumps(k), json.dumps(v)))
        port = free_port()
        self.log = open(os.path.join(tmp, 'firefox.log'), 'w')
        env = dict(os.environ, MOZ_HEADLESS='1')
        self.proc = subprocess.Popen([args.firefox, '--headless', '--no-remote', '--remote-debugging-port', str(port),
                                      '-profile', profile, 'about:blank'], stdout=self.log, stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                # No Origin header: Firefox refuses websocket clients that send one it was not told of.
                self.ws = websocket.create_connection('ws://127.0.0.1:%d/session' % port, timeout=args.timeout,
                                                      suppress_origin=True)
                break
            except Exception as e:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise Fail('Firefox did not open WebDriver BiDi on port %d: %s' % (port, e))
                time.sleep(0.2)
        self.send('session.new', {'capabilities': {}})
        self.context = self.send('browsingContext.getTree', {})['contexts'][0]['context']
        self.send('session.subscribe', {'events': ['log.entryAdded']})
        self.send('browsingContext.setViewport', {'context': self.context,
                                                  'viewport': {'width': args.width, 'height': args.height}})
        self.send('script.addPreloadScript', {'functionDeclaration': '() => {' + PRELUDE + '}'})

    def send(self, method, params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({'id': mine, 'method': method, 'params': params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get('id') == mine:
                if m.get('type') == 'error':
                    raise WebDriverException('%s: %s' % (m.get('error'), m.get('message')))
                return m.get('result') or {}
            if m.get('method') == 'log.entryAdded':
                p = m.get('params') or {}
                self.console.append({'level': p.get('level'), 'message': p.get('text')})

    def execute_script(self, code, *args):
        def box(a):
            return {'__el': a.index} if isinstance(a, FirefoxElement) else a
        r = self.send('script.callFunction', {
            'functionDeclaration': self.CALL % code, 'awaitPromise': False, 'target': {'context': self.context},
            'arguments': [{'type': 'string', 'value': json.dumps([box(a) for a in args])}]})
        if r.get('type') == 'exception':
            d = r.get('exceptionDetails') or {}
            raise WebDriverException('javascript error: %s' % d.get('text'))
        value = json.loads((r.get('result') or {}).get('value') or 'null')

        def unbox(v):
            if isinstance(v, dict):
                if set(v) == {'__el'}:
                    return FirefoxElement(self, v['__el'])
                return {k: unbox(x) for k, x in v.items()}
            if isinstance(v, list):
                return [unbox(x) for x in v]
            return v
        return unbox(value)

    def get(self, url):
        self.send('browsingContext.navigate', {'context': self.context, 'url': url, 'wait': 'complete'})

    def refresh(self):
        self.send('browsingContext.reload', {'context': self.context, 'wait': 'complete'})

    @property
    def current_url(self):
        return self.send('browsingContext.getTree', {'root': self.context})['contexts'][0]['url']

    def save_screenshot(self, path, full=False):
        r = self.send('browsingContext.captureScreenshot', {'context': self.context,
                                                            'origin': 'document' if full else 'viewport'})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(r['data']))

    def quit(self):
        try:
            self.send('browser.close', {})
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class Browser:
    def __init__(self, args):
        self.args = args
        self.console = []
        self.tmp = tempfile.mkdtemp(prefix='partyradio-browser-')
        self.webkit_driver = None
        if args.engine == 'firefox':
            self.d = FirefoxBiDi(args, self.tmp, self.console)
            return
        if args.engine == 'webkit':
            self.start_webkit()
            return
        opts = webdriver.ChromeOptions()
        opts.binary_location = args.chromium
        for a in ['--headless=new', '--no-sandbox', '--autoplay-policy=no-user-gesture-required',
                  '--user-data-dir=' + os.path.join(self.tmp, 'profile'), '--disable-dev-shm-usage',
                  '--disable-gpu', '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--disable-default-apps', '--disable-breakpad', '--metrics-recording-only',
                  '--password-store=basic', '--use-mock-keychain', '--disable-features=Translate,MediaRouter,'
                  'OptimizationHints,DialMediaRouteProvider,AutofillServerCommunication',
                  '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
                  '--disable-backgrounding-occluded-windows',
                  '--window-size=%d,%d' % (args.width, args.height)]:
            opts.add_argument(a)
        if args.secure_origin:
            from urllib.parse import urlsplit
            u = urlsplit(args.url)
            opts.add_argument('--unsafely-treat-insecure-origin-as-secure=%s://%s' % (u.scheme, u.netloc))
        opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        env = dict(os.environ)
        env['DBUS_SESSION_BUS_ADDRESS'] = 'disabled:'
        env.pop('DISPLAY', None)
        env.pop('WAYLAND_DISPLAY', None)
        service = Service(executable_path=args.chromedriver, log_path=os.path.join(self.tmp, 'chromedriver.log'),
                          env=env)
        self.d = webdriver.Chrome(service=service, options=opts)
        self.d.set_page_load_timeout(args.timeout)
        self.d.set_script_timeout(args.timeout)
        self.d.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': PRELUDE})
        self.d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {
            'width': args.width, 'height': args.height, 'deviceScaleFactor': args.screenshot_scale,
            'mobile': args.width < 600})
        if args.color_scheme:
            self.d.execute_cdp_cmd('Emulation.setEmulatedMedia', {
                'features': [{'name': 'prefers-color-scheme', 'value': args.color_scheme}]})

    def start_webkit(self):
        # WebKitWebDriver on loopback (its default host fails where IPv6 is off), MiniBrowser in automation
        # mode on the display xvfb-run gave; selenium 4.8's webdriver.WebKitGTK() takes no service, so the
        # remote driver talks to the WebKitWebDriver started here.
        from selenium.webdriver import WebKitGTKOptions
        port = free_port()
        log = open(os.path.join(self.tmp, 'webkitwebdriver.log'), 'w')
        self.webkit_driver = subprocess.Popen([self.args.webkitdriver, '--host=127.0.0.1', '--port=%d' % port],
                                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_port(port, self.webkit_driver, 120, 'WebKitWebDriver')
        opts = WebKitGTKOptions()
        opts.binary_location = self.args.minibrowser
        opts.add_argument('--automation')
        self.d = webdriver.Remote(command_executor='http://127.0.0.1:%d' % port, options=opts)
        # MiniBrowser's window is at least 447 px wide.
        self.d.set_window_size(self.args.width, self.args.height)
        self.d.set_page_load_timeout(self.args.timeout)
        self.d.set_script_timeout(self.args.timeout)

    def close(self):
        d, self.d = getattr(self, 'd', None), None
        if d is not None:
            try:
                d.quit()
            except Exception:
                pass
        w, self.webkit_driver = self.webkit_driver, None
        if w is not None:
            try:
                os.killpg(w.pid, signal.SIGTERM)
                w.wait(timeout=10)
            except Exception:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers --
    def js(self, code, *a):
        return self.d.execute_script(code, *a)

    def poll(self, fn, timeout, what):
        # A page that reloads (the DJ's link opened over the guest's page) has no body for a moment:
        # a script error then is "not yet", and the last one is said if the wait times out.
        start = time.monotonic()
        error = None
        while True:
            try:
                v = fn()
            except WebDriverException as e:
                v, error = None, e
            if v:
                return v, int((time.monotonic() - start) * 1000)
            if time.monotonic() - start > timeout:
                raise Fail('timed out after %.1f s waiting for %s%s' % (
                    timeout, what, '' if error is None else ' (last: %s)' % str(error).strip()[:300]))
            time.sleep(0.05)

    def drain_console(self):
        # Chromium's log through chromedriver; Firefox's arrives with every BiDi answer; WebKit's driver
        # has none (its script errors are in window.__scriptErrors).
        if self.args.engine == 'chromium':
            try:
                for e in self.d.get_log('browser'):
                    self.console.append({'level': e.get('level'), 'message': e.get('message')})
            except Exception:
                pass
        del self.console[:-500]

    def script_errors(self):
        try:
            return self.js('return window.__scriptErrors || []')
        except Exception as e:
            return ['cannot read the page: %s' % e]

    def csp_errors(self):
        self.drain_console()
        out = [c['message'] for c in self.console if 'Content Security Policy' in (c['message'] or '')]
        try:
            for v in self.js('return window.__cspViolations || []'):
                out.append('violation: %s blocked %s %s' % (v.get('directive'), v.get('blocked'), v.get('sample') or ''))
        except Exception:
            pass
        return out

    def wait_loaded(self, timeout):
        # The page has its first state once the station's name or a track title arrived (or, for a
        # private station, once it asks for the join code).
        if self.args.engine == 'webkit':
            self.poll(lambda: self.js("return document.readyState === 'complete'"), timeout, 'the page to load')
            self.js(PRELUDE)
        self.poll(lambda: self.js("return !!(window.partyradioListen && document.getElementById('title') && "
                                  "(document.getElementById('me').textContent !== '…' || "
                                  "!document.getElementById('joinbox').hidden))"), timeout, 'the first state')

    def find(self, name, timeout):
        el, _ = self.poll(lambda: self.js(FIND_JS, name), timeout, 'a button named %r' % name)
        return el

    def field(self, label, timeout):
        code = ("const w = arguments[0]; for (const e of document.querySelectorAll('input, textarea')) {"
                " if ((e.getAttribute('aria-label') === w || e.getAttribute('placeholder') === w) &&"
                " !e.closest('[hidden]')) return e; } return null;")
        el, _ = self.poll(lambda: self.js(code, label), timeout, 'a field labelled %r' % label)
        return el

    def type_into(self, el, text):
        # Set the value directly (send_keys would be slow and keyboard-layout dependent).
        self.js("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}));",
                el, text)

    def submit(self, el):
        self.js("arguments[0].form.requestSubmit();", el)

    def message(self, id_):
        return self.js("const m = document.getElementById(arguments[0]); return m ? "
                       "{text: m.textContent, refused: m.classList.contains('err')} : null;", id_)

    def answer_after(self, id_, action, timeout):
        """Clears message id_, runs action, waits for a message to appear there."""
        self.js("const m = document.getElementById(arguments[0]); m.textContent = ''; m.classList.remove('err');", id_)
        action()
        m, _ = self.poll(lambda: (lambda m: m if m and (m['text'] or m['refused']) else None)(self.message(id_)),
                         timeout, 'an answer')
        return m

    # -- commands --
    def c_state(self, c):
        s = self.js(STATE_JS)
        s['csp_errors'] = self.csp_errors()
        s['script_errors'] = self.script_errors()
        return s

    def c_click(self, c):
        el = self.find(c['name'], float(c.get('timeout', WAIT)))
        try:
            el.click()
        except WebDriverException:
            # Covered by something (a sticky element) or moving: press it the way a script would.
            self.js('arguments[0].click()', el)
        return {'clicked': c['name']}

    def c_slide(self, c):
        """Moves the slider labelled LABEL to VALUE from the keyboard, as a person does: Home, then
        the right arrow VALUE - min times (Chromium and WebKit; Firefox's driver sets the value)."""
        el = self.field(c['label'], float(c.get('timeout', WAIT)))
        value = int(c['value'])
        low = int(self.js("return Number(arguments[0].min || 0);", el))
        if self.args.engine == 'firefox':
            self.js("arguments[0].value = arguments[1]; for (const t of ['input', 'change'])"
                    " arguments[0].dispatchEvent(new Event(t, {bubbles: true}));", el, str(value))
        else:
            from selenium.webdriver.common.keys import Keys
            el.send_keys(Keys.HOME + Keys.ARROW_RIGHT * (value - low))
        return {'value': self.js("return Number(arguments[0].value);", el)}

    def c_fill(self, c):
        el = self.field(c['label'], float(c.get('timeout', WAIT)))
        self.type_into(el, str(c.get('text', '')))
        if c.get('submit'):
            self.submit(el)
        return {}

    def c_wait_text(self, c):
        want = c['text']
        _, ms = self.poll(lambda: want in self.js('return document.body.innerText'), float(c.get('timeout', WAIT)),
                          'text %r' % want)
        return {'elapsed_ms': ms}

    def c_wait_gone(self, c):
        want = c['text']
        _, ms = self.poll(lambda: want not in self.js('return document.body.innerText'), float(c.get('timeout', WAIT)),
                          'text %r to go' % want)
        return {'elapsed_ms': ms}

    def c_wait_vote(self, c):
        up, down = int(c.get('up', 0)), int(c.get('down', 0))
        code = ("return [document.getElementById('up').textContent, document.getElementById('down').textContent]")
        try:
            _, ms = self.poll(lambda: self.js(code) == [str(up), str(down)], float(c.get('timeout', WAIT)),
                              'tally up %d down %d' % (up, down))
        except Fail as e:
            raise Fail('%s (shows %s)' % (e, self.js(code)))
        return {'elapsed_ms': ms}

    def c_request(self, c):
        timeout = float(c.get('timeout', WAIT))
        q = self.field('Search', timeout)
        self.js("document.getElementById('results').replaceChildren()")
        self.answer_after('smsg', lambda: (self.type_into(q, c['search']), self.submit(q)), timeout)
        self.poll(lambda: self.message('smsg')['text'] != 'Searching…', timeout, 'the search results')
        results = self.js("return Array.from(document.querySelectorAll('#results li'))"
                          ".map((li) => li.innerText.replace(/\\s+/g, ' ').trim())")
        pick = int(c.get('pick', 0))
        if pick >= len(results):
            raise Fail('no result %d for %r (%d results: %s)' % (pick, c['search'], len(results),
                                                                 self.message('smsg')['text']))
        buttons = self.js("return Array.from(document.querySelectorAll('#results li button'))")
        m = self.answer_after('smsg', buttons[pick].click, timeout)
        return {'results': results, 'message': m['text'], 'refused': m['refused']}

    def c_chat(self, c):
        timeout = float(c.get('timeout', WAIT))
        el = self.field('Chat message', timeout)
        self.js("const m = document.getElementById('cmsg'); m.textContent = ''; m.classList.remove('err');")
        self.type_into(el, str(c['text']))
        self.submit(el)
        # Sent: the field empties. Refused: the message turns red.
        self.poll(lambda: self.js("return document.getElementById('ctext').value === '' || "
                                  "document.getElementById('cmsg').classList.contains('err')"), timeout, 'an answer')
        m = self.message('cmsg')
        return {'message': m['text'], 'refused': m['refused']}

    def c_set_name(self, c):
        timeout = float(c.get('timeout', WAIT))
        if self.js("return document.getElementById('nform').hidden"):
            self.find('change', timeout).click()
        el = self.field('Your name', timeout)
        self.type_into(el, str(c['name']))
        m = self.answer_after('nmsg', lambda: self.submit(el), timeout)
        if not m['refused']:
            # The page reloads /api/state to show the name as the DJ cleaned it.
            try:
                self.poll(lambda: self.js("return document.getElementById('nform').hidden"), timeout, 'the name')
                time.sleep(0.3)
            except Fail:
                pass
        return {'message': m['text'], 'refused': m['refused'], 'you': self.js(
            "return document.getElementById('me').textContent")}

    def c_screenshot(self, c):
        path = c['path']
        if self.args.engine == 'firefox':
            self.d.save_screenshot(path, full=c.get('full', True))
        elif c.get('full', True) and self.args.engine == 'chromium':
            size = self.js("return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            shot = self.d.execute_cdp_cmd('Page.captureScreenshot', {
                'format': 'png', 'captureBeyondViewport': True,
                'clip': {'x': 0, 'y': 0, 'width': size[0], 'height': size[1], 'scale': 1}})
            with open(path, 'wb') as f:
                f.write(base64.b64decode(shot['data']))
        else:
            self.d.save_screenshot(path)
        return {'path': path}

    def c_eval(self, c):
        return {'value': self.js(c['js'], *c.get('args', []))}

    def listen_figures(self, with_samples):
        L = self.js("const L = window.partyradioListen; return L ? JSON.parse(JSON.stringify(L)) : null") or {}
        errs = [abs(x) for x in L.get('errorsMs') or []]
        if errs:
            s = sorted(errs)
            L['summary'] = {'n': len(s), 'meanAbsMs': round(sum(s) / len(s), 3), 'maxAbsMs': s[-1],
                            'p95AbsMs': s[min(len(s) - 1, int(0.95 * len(s)))]}
        if not with_samples:
            L.pop('samples', None)
        else:
            L['readings'] = self.js('return window.__prReadings || []')
            L['timeOrigin'] = self.js('return performance.timeOrigin')
        return L

    def c_listen(self, c):
        timeout = float(c.get('timeout', WAIT))
        self.js(READINGS_JS)
        if self.js("return window.partyradioListen.state") == 'off':
            self.find('Listen', timeout).click()
        time.sleep(float(c.get('seconds', 5)))
        return {'listen': self.listen_figures(bool(c.get('samples')))}

    def c_stop_listening(self, c):
        self.find('Stop listening', float(c.get('timeout', WAIT))).click()
        return {'listen': self.listen_figures(False)}

    def c_injection_check(self, c):
        r = self.js(INJECTION_JS)
        r['csp_errors'] = self.csp_errors()
        r['script_errors'] = self.script_errors()
        return r

    def c_open(self, c):
        self.d.get(c['url'])
        self.wait_loaded(float(c.get('timeout', self.args.timeout)))
        return {'url': self.d.current_url}

    def c_reload(self, c):
        self.d.refresh()
        self.wait_loaded(float(c.get('timeout', self.args.timeout)))
        return {}

    def c_console(self, c):
        self.drain_console()
        return {'console': self.console}


def emit(obj):
    sys.stdout.write(json.dumps(obj, default=str) + '\n')
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--url', required=True)
    p.add_argument('--width', type=int, default=1280)
    p.add_argument('--height', type=int, default=0, help='default: 740 below 600 px wide, else 900')
    p.add_argument('--name', default=None)
    p.add_argument('--timeout', type=float, default=60,
                   help='seconds for the page to load and show its state, and for one browser call')
    p.add_argument('--screenshot-scale', type=float, default=1)
    p.add_argument('--color-scheme', choices=['light', 'dark'], default=None, help='emulate prefers-color-scheme')
    p.add_argument('--secure-origin', action='store_true',
                   help='Chromium: treat the page\'s http origin as secure (WebCodecs needs a secure context)')
    p.add_argument('--engine', choices=['chromium', 'webkit', 'firefox'], default='chromium')
    p.add_argument('--chromium', default=CHROMIUM)
    p.add_argument('--chromedriver', default=CHROMEDRIVER)
    p.add_argument('--webkitdriver', default=WEBKITDRIVER)
    p.add_argument('--minibrowser', default=MINIBROWSER)
    p.add_argument('--firefox', default=FIREFOX)
    args = p.parse_args()
    if not args.height:
        args.height = 740 if args.width < 600 else 900

    b = None

    def bye(*_):
        if b is not None:
            b.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGHUP, bye)
    try:
        b = Browser(args)
        atexit.register(b.close)
        b.d.get(args.url)
        b.wait_loaded(args.timeout)
        ready = {'ready': True, 'ok': True, 'engine': args.engine, 'width': b.js('return window.innerWidth'),
                 'userAgent': b.js('return navigator.userAgent')}
        if args.name is not None:
            r = b.c_set_name({'name': args.name})
            ready['name'] = r
        emit(ready)
    except Exception as e:
        out = {'ready': False, 'error': '%s: %s' % (type(e).__name__, str(e).strip().split('\n')[0])}
        if b is not None:
            b.drain_console()
            out['console'] = b.console[-20:]
        emit(out)
        if b is not None:
            b.close()
        return 1

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            c = json.loads(line)
            name = c.get('cmd')
            if name == 'quit':
                emit({'ok': True, 'bye': True})
                break
            fn = getattr(b, 'c_' + str(name), None)
            if fn is None:
                raise Fail('unknown command %r' % name)
            r = fn(c)
            r.setdefault('ok', True)
            emit(r)
        except Fail as e:
            emit({'error': str(e)})
        except (KeyError, TypeError, ValueError) as e:
            emit({'error': 'bad command: %s: %s' % (type(e).__name__, e)})
        except WebDriverException as e:
            emit({'error': 'browser: %s' % (e.msg or str(e)).strip().split('\n')[0]})
        except Exception as e:
            emit({'error': '%s: %s' % (type(e).__name__, e), 'trace': traceback.format_exc(limit=3)})
    b.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
