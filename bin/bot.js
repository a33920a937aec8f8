#!/usr/bin/env node
// The package's `bot` command. It runs the TypeScript sources in this very process through tsx's loader hooks:
// no build step, and no child process, so signals reach the bot itself. (The image runs the compiled build.)
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
