// Where the commands keep their state by default (server/data-dir.ts): a checkout in its `.data/`, an
// installed package in the user's data folder (XDG), never in the directory a command was started from.
// test/install.test.ts checks the same through an installed `gateway serve`.
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { loadConfig } from '../server/config.js';
import { embeddedDataDir, isInstalledPackage, stateDir, userDataDir } from '../server/data-dir.js';
import { PROJECT_DIR } from '../server/version.js';

const checkout = '/home/ann/src/agent-history-gateway';
const installed = '/usr/local/lib/node_modules/agent-history-gateway';
const userProject = '/home/ann/work/some-project';

describe('the data folder', () => {
  it('an installed package is one under a node_modules folder; a checkout is not', () => {
    expect(isInstalledPackage(installed)).toBe(true);
    expect(isInstalledPackage('/home/ann/.npm-global/lib/node_modules/agent-history-gateway')).toBe(true);
    expect(isInstalledPackage('/home/ann/work/some-project/node_modules/agent-history-gateway')).toBe(true);
    expect(isInstalledPackage(checkout)).toBe(false);
    expect(isInstalledPackage(PROJECT_DIR)).toBe(false); // this checkout
  });

  it('the per-user folder follows XDG_DATA_HOME, else ~/.local/share; a relative XDG_DATA_HOME is ignored', () => {
    expect(userDataDir({ XDG_DATA_HOME: '/data/ann', HOME: '/home/ann' })).toBe('/data/ann/agent-history-gateway');
    expect(userDataDir({ HOME: '/home/ann' })).toBe('/home/ann/.local/share/agent-history-gateway');
    expect(userDataDir({ XDG_DATA_HOME: '', HOME: '/home/ann' })).toBe('/home/ann/.local/share/agent-history-gateway');
    expect(userDataDir({ XDG_DATA_HOME: 'data', HOME: '/home/ann' })).toBe('/home/ann/.local/share/agent-history-gateway');
    expect(userDataDir({})).toBe(`${os.homedir()}/.local/share/agent-history-gateway`);
  });

  it('state: the checkout\'s .data, the user\'s data folder for an install', () => {
    const env = { HOME: '/home/ann' };
    expect(stateDir(checkout, env)).toBe(`${checkout}/.data`);
    expect(stateDir(installed, env)).toBe('/home/ann/.local/share/agent-history-gateway');
  });

  it('the embedded database: GATEWAY_DATA_DIR (relative: from the current directory), else pg in the state folder', () => {
    const env = { HOME: '/home/ann' };
    expect(embeddedDataDir(installed, env, userProject)).toBe('/home/ann/.local/share/agent-history-gateway/pg');
    expect(embeddedDataDir(checkout, env, userProject)).toBe(`${checkout}/.data/pg`);
    expect(embeddedDataDir(installed, { ...env, GATEWAY_DATA_DIR: '/srv/pg' }, userProject)).toBe('/srv/pg');
    expect(embeddedDataDir(installed, { ...env, GATEWAY_DATA_DIR: 'db' }, userProject)).toBe(`${userProject}/db`);
    expect(embeddedDataDir(installed, { ...env, GATEWAY_DATA_DIR: '  ' }, userProject)).toBe('/home/ann/.local/share/agent-history-gateway/pg');
  });

  it('gateway serve\'s configuration: wherever it is started from', () => {
    const env = { XDG_DATA_HOME: '/home/ann/.data-home', HOME: '/home/ann' };
    expect(loadConfig(env, installed, userProject).dataDir).toBe('/home/ann/.data-home/agent-history-gateway/pg');
    expect(loadConfig(env, installed, '/tmp').dataDir).toBe('/home/ann/.data-home/agent-history-gateway/pg');
    expect(loadConfig(env, checkout, userProject).dataDir).toBe(`${checkout}/.data/pg`);
    expect(loadConfig({ ...env, GATEWAY_DATA_DIR: '/srv/pg' }, installed, userProject).dataDir).toBe('/srv/pg');
    // `npm start` in this checkout: .data/pg, as docs/running.md says.
    expect(loadConfig({}).dataDir).toBe(`${PROJECT_DIR}/.data/pg`);
  });
});
