// insightloom web page: sign in, submit, watch a job live (SSE), review its plan, download the report.
// Everything the server sends is inserted as text, except the plan, which the server renders to escaped HTML.
'use strict';

const TERMINAL = new Set(['completed', 'needs_review', 'failed', 'cancelled']);
const ACTIVE = new Set(['queued', 'running', 'awaiting_review']);
const MAX_ACTIVITY = 300;
const $ = (id) => document.getElementById(id);

const view = { jobId: null, source: null, lastId: 0, toolCalls: 0, refreshTimer: null };

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

async function api(path, options = {}) {
  const method = (options.method || 'GET').toUpperCase();
  const headers = { ...(options.headers || {}) };
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  const res = await fetch(path, { credentials: 'same-origin', ...options, headers });
  let body = null;
  try { body = await res.json(); } catch (_) { body = null; }
  if (res.status === 401 && path !== '/session') {
    showSignIn();
  }
  if (!res.ok) {
    const err = new Error(detailOf(body) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
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

document.addEventListener('DOMContentLoaded', () => {
  $('signin-form').addEventListener('submit', signIn);
  $('signout-button').addEventListener('click', signOut);
  $('submit-form').addEventListener('submit', submitJob);
  $('refresh-jobs').addEventListener('click', () => loadJobs().catch((err) => notice(err.message)));
  $('approve-button').addEventListener('click', () => sendReview(true));
  $('feedback-button').addEventListener('click', () => sendReview(false));
  $('cancel-button').addEventListener('click', cancelJob);
  init();
});
