const tc = await import('testcontainers');
try { await tc.getContainerRuntimeClient(); } catch {}
console.log('done', performance.now());
process.on('exit', () => console.log('exit', performance.now()));
