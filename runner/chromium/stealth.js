// The patches of advancedStealth (runner/chromium/stealth.go): they make a
// frame of the runner's Chromium look like a frame of a desktop Chrome of
// the session's fingerprint. The runner adds this script to every frame
// before the frame's own scripts run, with STEALTH_CONFIG replaced by the
// session's values. A patch that fails is left out, silently: a page sees
// no error of this script. It leaves nothing a page can enumerate: patched
// functions are proxies of the native ones, their toString is the native
// one's, and properties keep Chrome's descriptors.
(function (cfg) {
  'use strict';
  try {
  const origToString = Function.prototype.toString;
  const reflectApply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getDescriptor = Object.getOwnPropertyDescriptor;
  // native maps a patched function to what toString says of it.
  const native = new WeakMap();

  // clean removes this script's frames (its sourceURL, at the end, names
  // them) from an error's stack, so that an error thrown through a patched
  // function looks thrown by Chrome.
  function clean(err) {
    try {
      if (err && typeof err.stack === 'string') {
        err.stack = err.stack.split('\n').filter((l) => !l.includes('__bfStealth')).join('\n');
      }
    } catch (_) { /* a frozen error keeps its stack */ }
    return err;
  }

  // mask makes fn's toString say what the native function's says.
  function mask(fn, like) {
    native.set(fn, typeof like === 'string' ? like : reflectApply(origToString, like, []));
    return fn;
  }

  // wrap is a proxy of the native function orig whose calls go to
  // handler(call, self, args); call runs orig.
  function wrap(orig, handler) {
    const p = new Proxy(orig, {
      apply: function __bfStealth(target, self, args) {
        try {
          return handler(() => reflectApply(target, self, args), self, args);
        } catch (err) {
          throw clean(err);
        }
      },
    });
    return mask(p, orig);
  }

  function patchMethod(obj, name, handler) {
    const d = obj && getDescriptor(obj, name);
    if (!d || typeof d.value !== 'function') {
      return;
    }
    defineProperty(obj, name, { ...d, value: wrap(d.value, handler) });
  }

  function patchGetter(obj, name, handler) {
    const d = obj && getDescriptor(obj, name);
    if (!d || typeof d.get !== 'function') {
      return;
    }
    defineProperty(obj, name, { ...d, get: wrap(d.get, handler) });
  }

  // Function.prototype.toString first: everything below relies on it.
  const toString = new Proxy(origToString, {
    apply: function __bfStealth(target, self, args) {
      if (native.has(self)) {
        return native.get(self);
      }
      try {
        return reflectApply(target, self, args);
      } catch (err) {
        throw clean(err);
      }
    },
  });
  mask(toString, origToString);
  defineProperty(Function.prototype, 'toString', { ...getDescriptor(Function.prototype, 'toString'), value: toString });

  // WebGL: the GPU of the fingerprint's OS, not SwiftShader. Chrome
  // answers the unmasked parameters only once WEBGL_debug_renderer_info is
  // enabled, so a null stays null.
  if (cfg.webglVendor) {
    const UNMASKED_VENDOR = 0x9245;
    const UNMASKED_RENDERER = 0x9246;
    for (const C of [self.WebGLRenderingContext, self.WebGL2RenderingContext]) {
      patchMethod(C && C.prototype, 'getParameter', (call, _, args) => {
        const v = call();
        if (v === null || v === undefined) {
          return v;
        }
        if (args[0] === UNMASKED_VENDOR) {
          return cfg.webglVendor;
        }
        if (args[0] === UNMASKED_RENDERER) {
          return cfg.webglRenderer;
        }
        return v;
      });
    }
  }

  // Notifications: the headless shell says "denied" while the Permissions
  // API says "prompt"; a desktop Chrome that never asked says "default".
  // Chrome denies notifications to cross-origin iframes, and says so.
  const isWindow = typeof Window === 'function' && self instanceof Window;
  let crossOriginFrame = false;
  try {
    crossOriginFrame = isWindow && self.top !== self && self.top.location.origin !== self.location.origin;
  } catch (_) {
    crossOriginFrame = true;
  }
  if (cfg.notifications && self.Notification && !crossOriginFrame) {
    patchGetter(self.Notification, 'permission', (call) => {
      const v = call();
      return v === 'denied' ? 'default' : v;
    });
  }
  if (cfg.notifications && crossOriginFrame && self.PermissionStatus) {
    patchGetter(PermissionStatus.prototype, 'state', (call, self) => {
      const v = call();
      return v === 'prompt' && self.name === 'notifications' ? 'denied' : v;
    });
  }

  // A worker's navigator: Chrome gives workers the user agent override
  // but not its platform or languages.
  if (!isWindow && self.WorkerNavigator && cfg.platform) {
    const languages = Object.freeze(cfg.languages.slice());
    patchGetter(WorkerNavigator.prototype, 'platform', (call, self) => (self === navigator ? cfg.platform : call()));
    patchGetter(WorkerNavigator.prototype, 'language', (call, self) => (self === navigator ? languages[0] : call()));
    patchGetter(WorkerNavigator.prototype, 'languages', (call, self) => (self === navigator ? languages : call()));
  }

  // The PDF viewer entries of a desktop Chrome, where the browser has none
  // (the headless shell has no PDF viewer); none for a phone or tablet,
  // where the browser has them (Chromium).
  if (isWindow && navigator.plugins && (navigator.plugins.length === 0) === cfg.plugins &&
      self.Plugin && self.PluginArray && self.MimeType && self.MimeTypeArray) {
    const data = new WeakMap();
    const fake = (proto, d) => {
      const o = Object.create(proto);
      data.set(o, d);
      return o;
    };
    const mimeTypes = [
      { type: 'application/pdf', suffixes: 'pdf', description: 'Portable Document Format' },
      { type: 'text/pdf', suffixes: 'pdf', description: 'Portable Document Format' },
    ].filter(() => cfg.plugins).map((m) => fake(MimeType.prototype, m));
    const names = cfg.plugins ? ['PDF Viewer', 'Chrome PDF Viewer', 'Chromium PDF Viewer', 'Microsoft Edge PDF Viewer', 'WebKit built-in PDF'] : [];
    const plugins = names.map((name) => fake(Plugin.prototype, {
      name, filename: 'internal-pdf-viewer', description: 'Portable Document Format', items: mimeTypes,
    }));
    for (const m of mimeTypes) {
      data.get(m).enabledPlugin = plugins[0];
    }
    const pluginArray = fake(PluginArray.prototype, { items: plugins });
    const mimeTypeArray = fake(MimeTypeArray.prototype, { items: mimeTypes });
    // Indexed entries are enumerable, named ones not, as Chrome's.
    const index = (o, key) => {
      data.get(o).items.forEach((item, i) => defineProperty(o, i, { value: item, writable: false, enumerable: true, configurable: true }));
      data.get(o).items.forEach((item) => {
        const n = data.get(item)[key];
        if (!(n in o)) {
          defineProperty(o, n, { value: item, writable: false, enumerable: false, configurable: true });
        }
      });
    };
    index(pluginArray, 'name');
    index(mimeTypeArray, 'type');
    for (const p of plugins) {
      index(p, 'type');
    }
    const field = (proto, name) => patchGetter(proto, name, (call, self) => (data.has(self) ? data.get(self)[name] : call()));
    for (const name of ['name', 'filename', 'description']) {
      field(Plugin.prototype, name);
    }
    for (const name of ['type', 'suffixes', 'description', 'enabledPlugin']) {
      field(MimeType.prototype, name);
    }
    for (const proto of [Plugin.prototype, PluginArray.prototype, MimeTypeArray.prototype]) {
      patchGetter(proto, 'length', (call, self) => (data.has(self) ? data.get(self).items.length : call()));
      patchMethod(proto, 'item', (call, self, args) => {
        if (!data.has(self)) {
          return call();
        }
        return data.get(self).items[args[0] >>> 0] || null;
      });
      patchMethod(proto, 'namedItem', (call, self, args) => {
        if (!data.has(self)) {
          return call();
        }
        const key = proto === Plugin.prototype || proto === MimeTypeArray.prototype ? 'type' : 'name';
        return data.get(self).items.find((i) => data.get(i)[key] === String(args[0])) || null;
      });
    }
    patchGetter(Navigator.prototype, 'plugins', (call, self) => (self === navigator ? pluginArray : call()));
    patchGetter(Navigator.prototype, 'mimeTypes', (call, self) => (self === navigator ? mimeTypeArray : call()));
    patchGetter(Navigator.prototype, 'pdfViewerEnabled', (call, self) => (self === navigator ? cfg.plugins : call()));
  }

  // window.chrome as Chromium has it on a web page: loadTimes, csi and
  // app (chrome.runtime exists only where an extension offers itself to
  // the page, so a plain Chrome has none).
  if (cfg.chrome && isWindow && !('chrome' in self)) {
    const timing = () => performance.timing;
    const nav = () => performance.getEntriesByType('navigation')[0] || {};
    const loadTimes = mask((0, function () {
      const t = timing();
      const n = nav();
      const proto = n.nextHopProtocol || 'http/1.1';
      return {
        requestTime: t.navigationStart / 1000,
        startLoadTime: t.navigationStart / 1000,
        commitLoadTime: t.responseStart / 1000,
        finishDocumentLoadTime: t.domContentLoadedEventEnd / 1000,
        finishLoadTime: t.loadEventEnd / 1000,
        firstPaintTime: (t.loadEventEnd || t.domContentLoadedEventEnd || t.responseStart) / 1000,
        firstPaintAfterLoadTime: 0,
        navigationType: 'Other',
        wasFetchedViaSpdy: proto === 'h2' || proto === 'h3',
        wasNpnNegotiated: proto === 'h2' || proto === 'h3',
        npnNegotiatedProtocol: proto === 'h2' || proto === 'h3' ? proto : 'unknown',
        wasAlternateProtocolAvailable: false,
        connectionInfo: proto,
      };
    }), 'function () { [native code] }');
    const csi = mask((0, function () {
      const t = timing();
      return { startE: t.navigationStart, onloadT: t.domContentLoadedEventEnd, pageT: performance.now(), tran: 15 };
    }), 'function () { [native code] }');
    const fn = (name, body) => {
      const f = { [name]() { return body.apply(this, arguments); } }[name];
      return mask(f, 'function ' + name + '() { [native code] }');
    };
    const app = {
      isInstalled: false,
      getDetails: fn('getDetails', () => null),
      getIsInstalled: fn('getIsInstalled', () => false),
      installState: fn('installState', (cb) => { if (typeof cb === 'function') { setTimeout(() => cb('not_installed'), 0); } }),
      runningState: fn('runningState', () => 'cannot_run'),
      InstallState: { DISABLED: 'disabled', INSTALLED: 'installed', NOT_INSTALLED: 'not_installed' },
      RunningState: { CANNOT_RUN: 'cannot_run', READY_TO_RUN: 'ready_to_run', RUNNING: 'running' },
    };
    defineProperty(self, 'chrome', {
      value: { loadTimes, csi, app }, writable: true, enumerable: true, configurable: true,
    });
  }
  } catch (_) { /* see above */ }
})(STEALTH_CONFIG);
//# sourceURL=__bfStealth
