// insightloom web page: sign in, submit, watch a job live (SSE), review its plan, download the report, and ask a
// finished job follow-up questions (answers stream in, with their cited fragments).
// Everything the server sends is inserted as text, except the plan and the finished report, which the server renders
// to escaped HTML.
'use strict';

const TERMINAL = new Set(['completed', 'needs_review', 'failed', 'cancelled']);
const FINISHED = new Set(['completed', 'needs_review']);  // ended with a report: something to ask about
const ACTIVE = new Set(['queued', 'running', 'awaiting_review']);
const MAX_ACTIVITY = 300;
const $ = (id) => document.getElementById(id);

const view = { jobId: null, source: null, lastId: 0, toolCalls: 0, refreshTimer: null, report: null };
const ask = { session: null, busy: false, turns: 0 };  // the open job's conversation

function notice(message) {
  const box = $('notice');
  box.textContent = message || '';
  box.hidden = !message;
}

function detailOf(body) {
  if (!body) return '';
  if (typeof body.detail === 'string') {
    return typeof body.fix === 'string' && body.fix ? `${body.detail} Fix: ${body.fix}` : body.detail;
  }
  if (Array.isArray(body.detail)) {
    return body.detail.map((d) => `${(d.loc || []).slice(1).join('.')}: ${d.msg}`).join('; ');
  }
  return '';
}

let csrfToken = null;  // sent on every state-changing request of a cookie session

function send(path, options = {}) {
  const method = (options.method || 'GET').toUpperCase();
  const headers = { ...(options.headers || {}) };
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  return fetch(path, { credentials: 'same-origin', ...options, headers });
}

async function readJson(res) {
  try { return await res.json(); } catch (_) { return null; }
}

// The error of a failed answer: its {detail, fix} body as a message; a 401 asks to sign in again.
function failure(res, body, path) {
  if (res.status === 401 && path !== '/session') showSignIn();
  const err = new Error(detailOf(body) || `${res.status} ${res.statusText}`);
  err.status = res.status;
  return err;
}

async function api(path, options = {}) {
  const res = await send(path, options);
  const body = await readJson(res);
  if (!res.ok) throw failure(res, body, path);
  return body;
}

function postJson(path, data) {
  return api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(data),
  });
}

// --- session ---------------------------------------------------------------------------------------------------

function showSignIn() {
  closeStream();
  $('app').hidden = true;
  $('who').hidden = true;
  $('signin').hidden = false;
  $('token').focus();
}

async function init() {
  let session;
  try {
    session = await api('/session');
    csrfToken = session.csrf_token;
  } catch (err) {
    if (err.status === 401) { showSignIn(); return; }
    notice(err.message);
    return;
  }
  $('signin').hidden = true;
  $('app').hidden = false;
  $('who').hidden = session.open;
  $('user-name').textContent = session.user;
  const select = $('provider');
  select.replaceChildren();
  for (const name of session.providers) {
    const isDefault = name === session.default_provider;
    const option = new Option(name, name, isDefault, isDefault);
    select.append(option);
  }
  $('max-revisions').value = session.max_revisions;
  await loadJobs();
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) openJob(fromHash);
}

async function signIn(event) {
  event.preventDefault();
  notice('');
  try {
    await postJson('/session', { token: $('token').value });
    $('token').value = '';
    await init();
  } catch (err) {
    notice(err.status === 401 ? 'That token was not accepted.' : err.message);
  }
}

async function signOut() {
  const headers = csrfToken ? { 'X-CSRF-Token': csrfToken } : {};
  await fetch('/session', { method: 'DELETE', credentials: 'same-origin', headers });
  csrfToken = null;
  location.hash = '';
  showSignIn();
}

// --- jobs list and submit ----------------------------------------------------------------------------------------

async function loadJobs() {
  const { jobs } = await api('/jobs');
  const list = $('jobs');
  list.replaceChildren();
  if (!jobs.length) {
    const empty = document.createElement('li');
    empty.className = 'hint';
    empty.textContent = 'No jobs yet.';
    list.append(empty);
  }
  for (const job of jobs) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'job-link';
    button.dataset.id = job.id;
    const title = document.createElement('span');
    title.className = 'job-request';
    title.textContent = job.request || job.id;
    const badge = document.createElement('span');
    badge.className = `badge ${job.status}`;
    badge.textContent = job.status.replace('_', ' ');
    const when = document.createElement('small');
    when.textContent = (job.created_at || '').replace('T', ' ').slice(0, 16);
    button.append(title, badge, when);
    button.addEventListener('click', () => openJob(job.id));
    item.append(button);
    list.append(item);
  }
}

async function submitJob(event) {
  event.preventDefault();
  notice('');
  const form = new FormData();
  for (const file of $('files').files) form.append('files', file, file.name);
  form.append('request', $('request').value);
  form.append('provider', $('provider').value);
  form.append('auto_approve', $('auto-approve').checked ? 'true' : 'false');
  form.append('max_revisions', $('max-revisions').value);
  const button = $('submit-button');
  button.disabled = true;
  try {
    const { id } = await api('/jobs', { method: 'POST', body: form });
    $('submit-form').reset();
    $('max-revisions').value = form.get('max_revisions');
    await loadJobs();
    openJob(id);
  } catch (err) {
    notice(`Not submitted: ${err.message}`);
  } finally {
    button.disabled = false;
  }
}

// --- one job ------------------------------------------------------------------------------------------------------

function closeStream() {
  if (view.source) view.source.close();
  view.source = null;
}

function openJob(id) {
  closeStream();
  Object.assign(view, { jobId: id, lastId: 0, toolCalls: 0 });
  ask.session = null;
  view.report = null;
  $('report-box').hidden = true;
  $('report').replaceChildren();
  location.hash = encodeURIComponent(id);
  $('job').hidden = false;
  $('activity').replaceChildren();
  for (const [el, text] of [['stage', '–'], ['agent', '–'], ['tool-calls', '0'], ['tokens', '0 / 0']]) {
    $(el).textContent = text;
  }
  refreshJob();
  const source = new EventSource(`/jobs/${encodeURIComponent(id)}/events`);
  view.source = source;
  const kinds = ['stage', 'agent_start', 'agent_end', 'tool_call', 'tool_result', 'usage', 'plan_review_request',
    'plan_revised', 'error', ...TERMINAL];
  for (const kind of kinds) source.addEventListener(kind, (msg) => onEvent(id, msg));
  source.onerror = () => {
    if (view.source === source && source.readyState === EventSource.CONNECTING) {
      addActivity('connection lost, reconnecting…', 'muted');
    }
  };
}

function addActivity(text, cls = '') {
  const list = $('activity');
  const item = document.createElement('li');
  item.textContent = text;
  if (cls) item.className = cls;
  list.prepend(item);
  while (list.children.length > MAX_ACTIVITY) list.lastChild.remove();
}

function onEvent(id, msg) {
  if (id !== view.jobId) return;
  const event = JSON.parse(msg.data);
  if (event.id <= view.lastId) return;
  view.lastId = event.id;
  const data = event.data || {};
  const time = (event.ts || '').slice(11, 19);
  switch (event.kind) {
    case 'stage':
      $('stage').textContent = data.name;
      addActivity(`${time} ▶ ${data.name}`, 'stage');
      scheduleRefresh();
      break;
    case 'agent_start':
      $('agent').textContent = data.agent;
      addActivity(`${time} ${data.agent} started`);
      break;
    case 'agent_end':
      addActivity(`${time} ${data.agent} done`, 'muted');
      break;
    case 'tool_call':
      view.toolCalls += 1;
      $('tool-calls').textContent = String(view.toolCalls);
      addActivity(`${time}   → ${data.agent}: ${data.tool}`, 'tool');
      break;
    case 'tool_result':
      if (data.status === 'error') addActivity(`${time}   ✗ ${data.tool} failed`, 'bad');
      break;
    case 'usage':
      $('tokens').textContent = `${(data.input_tokens || 0).toLocaleString()} / ${(data.output_tokens || 0).toLocaleString()}`;
      break;
    case 'plan_review_request':
      addActivity(`${time} plan ready for review (revision ${data.revision} of ${data.max_revisions})`, 'stage');
      scheduleRefresh();
      loadJobs().catch(() => {});
      break;
    case 'plan_revised':
      addActivity(`${time} plan revised (revision ${data.revision})`, 'stage');
      break;
    case 'error':
      addActivity(`${time} error: ${data.message}`, 'bad');
      break;
    default:
      if (TERMINAL.has(event.kind)) {
        addActivity(`${time} ${event.kind.replace('_', ' ')}`, event.kind === 'completed' ? 'good' : 'bad');
        closeStream();
        scheduleRefresh();
        loadJobs().catch(() => {});
      }
  }
}

function scheduleRefresh() {
  clearTimeout(view.refreshTimer);
  view.refreshTimer = setTimeout(refreshJob, 150);
}

function artifactUrl(id, path) {
  return `/jobs/${encodeURIComponent(id)}/artifacts/${path.split('/').map(encodeURIComponent).join('/')}`;
}

function link(id, path, label) {
  const a = document.createElement('a');
  a.href = artifactUrl(id, path);
  a.textContent = label || path;
  a.setAttribute('download', path.split('/').pop());
  return a;
}

async function refreshJob() {
  const id = view.jobId;
  if (!id) return;
  let job;
  try {
    job = await api(`/jobs/${encodeURIComponent(id)}`);
  } catch (err) {
    if (id === view.jobId) notice(err.message);
    return;
  }
  if (id !== view.jobId) return;
  renderJob(job);
}

function renderJob(job) {
  $('job-title').textContent = `Job ${job.id}`;
  const status = $('status');
  status.textContent = job.status.replace('_', ' ');
  status.className = `badge ${job.status}`;
  status.dataset.status = job.status;
  const request = $('job-request');
  request.textContent = job.request || '';
  request.lang = job.language || 'en';
  if (job.stage) $('stage').textContent = job.stage;
  if (job.usage && job.usage.total) {
    const t = job.usage.total;
    $('tokens').textContent = `${t.input_tokens.toLocaleString()} / ${t.output_tokens.toLocaleString()}`;
  }
  const error = $('job-error');
  error.textContent = job.error || '';
  error.hidden = !job.error;

  const planBox = $('plan-box');
  planBox.hidden = !job.plan_html;
  if (job.plan_html) {
    const plan = $('plan');
    plan.innerHTML = job.plan_html; // rendered server-side with raw HTML escaped
    plan.lang = job.language || 'en';
    $('plan-title').textContent = job.revisions > 0
      ? `Revised plan (revision ${job.revisions} of ${job.max_revisions})` : 'Plan';
  }

  const reviewing = job.status === 'awaiting_review' && !job.review_pending;
  $('review').hidden = !reviewing;
  const left = (job.max_revisions || 0) - job.revisions;
  $('feedback-button').disabled = left <= 0;
  $('feedback').disabled = left <= 0;
  $('revisions-left').textContent = left > 0 ? `(${left} revision${left === 1 ? '' : 's'} left)` : '(no revisions left)';
  if (reviewing) $('approve-button').disabled = false;
  $('cancel-button').hidden = !ACTIVE.has(job.status);
  renderDownloads(job);
  renderReport(job);
  renderAskBox(job);
}

// --- the finished report -------------------------------------------------------------------------------------------

// Shown once per job and version: the server builds it from the rendered report with every model text escaped.
async function renderReport(job) {
  const box = $('report-box');
  const key = `${job.id} ${job.updated_at || ''}`;
  if (!FINISHED.has(job.status) || !job.report) { box.hidden = true; return; }
  if (view.report === key) return;
  view.report = key;
  const path = `/jobs/${encodeURIComponent(job.id)}/report.html`;
  const res = await send(path);
  if (!res.ok) {
    notice(`The report cannot be shown: ${detailOf(await readJson(res)) || res.status}`);
    return;
  }
  const html = await res.text();
  if (view.jobId !== job.id) return;
  const report = $('report');
  report.innerHTML = html; // built server-side: escaped text, and only its own elements
  box.hidden = false;
}

// A marker [N] scrolls to its reference entry; the page's hash stays the open job.
function followMarker(event) {
  const link = event.target.closest('a.cite');
  if (!link || !$('report').contains(link)) return;
  event.preventDefault();
  const entry = document.getElementById(link.getAttribute('href').slice(1));
  if (!entry) return;
  entry.scrollIntoView({ block: 'nearest' });
  entry.classList.add('flash');
  setTimeout(() => entry.classList.remove('flash'), 1500);
}

function renderDownloads(job) {
  const box = $('downloads');
  const done = TERMINAL.has(job.status);
  box.hidden = !done || !job.artifacts.length;
  if (box.hidden) return;
  const main = $('download-list');
  main.replaceChildren();
  const wanted = [
    ['final_report.docx', 'Report (DOCX)', 'report-link'],
    ['final_report.pdf', 'Report (PDF)', 'pdf-link'],
    ['citations.json', 'Citations', ''],
    ['all_results.txt', 'Analysis results', ''],
    ['usage.json', 'Token usage', ''],
  ];
  for (const [path, label, elementId] of wanted) {
    if (!job.artifacts.includes(path)) continue;
    const item = document.createElement('li');
    const a = link(job.id, path, label);
    if (elementId) a.id = elementId;
    item.append(a);
    main.append(item);
  }
  const all = $('artifact-list');
  all.replaceChildren();
  for (const path of job.artifacts) {
    const item = document.createElement('li');
    item.append(link(job.id, path));
    all.append(item);
  }
}

async function sendReview(approve) {
  const id = view.jobId;
  const feedback = $('feedback').value.trim();
  if (!approve && !feedback) {
    notice('Write what should change in the plan, then press Request changes.');
    $('feedback').focus();
    return;
  }
  notice('');
  $('approve-button').disabled = true;
  $('feedback-button').disabled = true;
  try {
    await postJson(`/jobs/${encodeURIComponent(id)}/review`, approve ? { approve: true } : { approve: false, feedback });
    $('feedback').value = '';
    $('review').hidden = true;
    addActivity(approve ? 'plan approved' : 'changes requested: revising the plan…', 'stage');
  } catch (err) {
    notice(err.message);
    $('approve-button').disabled = false;
    $('feedback-button').disabled = false;
  }
}

async function cancelJob() {
  if (!confirm('Cancel this job? Its files are kept.')) return;
  try {
    await api(`/jobs/${encodeURIComponent(view.jobId)}/cancel`, { method: 'POST' });
    addActivity('cancel requested', 'bad');
    scheduleRefresh();
  } catch (err) {
    notice(err.message);
  }
}

// --- follow-up questions -----------------------------------------------------------------------------------------

const CITE = /\[(F\d+)\]/g;

function renderAskBox(job) {
  const box = $('ask-box');
  box.hidden = !FINISHED.has(job.status);
  if (box.hidden) return;
  box.lang = job.language || 'en';
  const session = `web-${job.id}`.slice(0, 64);  // one conversation per job page
  if (ask.session === session) return;
  ask.session = session;
  $('ask-history').replaceChildren();
  loadAskHistory(session);
}

async function loadAskHistory(session) {
  let body;
  try {
    body = await api(`/ask/sessions/${encodeURIComponent(session)}`);
  } catch (err) {
    return;  // no history is no reason to block asking
  }
  if (ask.session !== session) return;
  for (const turn of body.turns) addTurn(turn.role, turn.text);
}

function addTurn(role, text, cls = '') {
  const item = document.createElement('li');
  item.className = `${role} ${cls}`.trim();
  item.textContent = text;
  $('ask-history').append(item);
  item.scrollIntoView({ block: 'nearest' });
  return item;
}

// The answer's text with each sent [F#] as a link to its fragment below.
function citedText(text, turn, known) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(CITE)) {
    nodes.push(document.createTextNode(text.slice(last, match.index)));
    if (known.has(match[1])) {
      const a = document.createElement('a');
      a.className = 'cite';
      a.href = `#cite-${turn}-${match[1]}`;
      a.textContent = match[0];
      a.addEventListener('click', (event) => {
        event.preventDefault();  // the page's hash is the open job
        revealSource(turn, match[1]);
      });
      nodes.push(a);
    } else {
      nodes.push(document.createTextNode(match[0]));
    }
    last = match.index + match[0].length;
  }
  nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

function revealSource(turn, fragmentId) {
  const item = document.getElementById(`cite-${turn}-${fragmentId}`);
  if (!item) return;
  item.closest('details').open = true;
  item.scrollIntoView({ block: 'nearest' });
  item.classList.add('flash');
  setTimeout(() => item.classList.remove('flash'), 1500);
}

function sourcesList(citations, turn) {
  const details = document.createElement('details');
  details.className = 'sources';
  const summary = document.createElement('summary');
  summary.textContent = `Sources (${citations.length})`;
  const list = document.createElement('ol');
  for (const cite of citations) {
    const item = document.createElement('li');
    item.id = `cite-${turn}-${cite.id}`;
    item.className = 'source';
    const head = document.createElement('strong');
    head.textContent = `[${cite.id}] `;
    const where = document.createElement('span');
    where.className = 'hint';
    where.textContent = [cite.section, cite.source, cite.job_id, (cite.date || '').slice(0, 10)]
      .filter(Boolean).join(' · ');
    const quote = document.createElement('blockquote');
    quote.textContent = cite.text || '';
    item.append(head, where, quote);
    list.append(item);
  }
  details.append(summary, list);
  return details;
}

function fillAnswer(item, result) {
  ask.turns += 1;
  const turn = ask.turns;
  const citations = result.citations || [];
  item.className = result.abstained ? 'assistant abstained' : 'assistant';
  item.replaceChildren(...citedText(result.answer, turn, new Set(citations.map((c) => c.id))));
  const meta = document.createElement('span');
  meta.className = 'meta';
  const calls = `${result.model_calls} model call${result.model_calls === 1 ? '' : 's'}`;
  const added = (result.new_calc_ids || []).length ? ` · new verified numbers: ${result.new_calc_ids.join(', ')}` : '';
  meta.textContent = `${result.abstained ? 'no answer in the data' : 'answered'} · ${result.retrieval} · ${calls} · `
    + `${Number(result.seconds || 0).toFixed(2)} s${added}`;
  item.append(meta);
  if (result.computed) {
    const computed = document.createElement('span');
    computed.className = 'meta computed';
    computed.textContent = `computed: ${result.computed}`;
    item.append(computed);
  }
  if (citations.length) item.append(sourcesList(citations, turn));
}

// One SSE frame ("event: x\ndata: {...}") as [event, data].
function parseFrame(frame) {
  let event = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  return [event, data.length ? JSON.parse(data.join('\n')) : null];
}

// POST a question with Accept: text/event-stream; onText gets the chunks, the result is the checked answer.
async function postAsk(id, question, analyze, onText) {
  const path = `/jobs/${encodeURIComponent(id)}/ask`;
  const res = await send(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ question, session: ask.session, analyze }),
  });
  if (!res.ok) throw failure(res, await readJson(res), path);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let result = null;
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const [event, data] = parseFrame(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event === 'text') onText(data.text);
      else if (event === 'answer') result = data;
      else if (event === 'error') throw new Error(detailOf(data));
    }
    if (done) break;
  }
  if (!result) throw new Error('The answer stopped before it was complete: ask again.');
  return result;
}

function setAskBusy(busy) {
  ask.busy = busy;
  for (const name of ['ask-button', 'ask-analyze-button', 'ask-forget-button']) $(name).disabled = busy;
}

async function askQuestion(analyze) {
  const id = view.jobId;
  const question = $('question').value.trim();
  if (!question) {
    notice('Write a question first.');
    $('question').focus();
    return;
  }
  if (ask.busy) return;
  notice('');
  setAskBusy(true);
  addTurn('user', question);
  const pending = addTurn('assistant', analyze ? 'Analysing the data…' : 'Looking it up…', 'pending');
  let streamed = '';
  try {
    const result = await postAsk(id, question, analyze, (chunk) => {
      streamed += chunk;
      pending.textContent = streamed;
    });
    if (id !== view.jobId) return;
    fillAnswer(pending, result);
    $('question').value = '';
  } catch (err) {
    pending.remove();
    notice(`No answer: ${err.message}`);
  } finally {
    setAskBusy(false);
  }
}

async function forgetConversation() {
  if (!ask.session || !confirm('Forget this conversation? Earlier questions will no longer be remembered.')) return;
  try {
    await api(`/ask/sessions/${encodeURIComponent(ask.session)}`, { method: 'DELETE' });
    $('ask-history').replaceChildren();
  } catch (err) {
    notice(err.message);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('signin-form').addEventListener('submit', signIn);
  $('signout-button').addEventListener('click', signOut);
  $('submit-form').addEventListener('submit', submitJob);
  $('refresh-jobs').addEventListener('click', () => loadJobs().catch((err) => notice(err.message)));
  $('approve-button').addEventListener('click', () => sendReview(true));
  $('feedback-button').addEventListener('click', () => sendReview(false));
  $('cancel-button').addEventListener('click', cancelJob);
  $('ask-form').addEventListener('submit', (event) => { event.preventDefault(); askQuestion(false); });
  $('ask-analyze-button').addEventListener('click', () => askQuestion(true));
  $('ask-forget-button').addEventListener('click', forgetConversation);
  $('report').addEventListener('click', followMarker);
  init();
});
