// Jest's node environment with the host realm's typed arrays and ArrayBuffer: onnxruntime-node
// checks tensor data with `instanceof Float32Array` against its own (host) realm, which a test
// sandbox's arrays fail ("A float32 tensor's data must be type of Float32Array"). Test files that
// run a real ONNX model opt in with `@jest-environment ./test/support/onnx.environment.js`.
const { TestEnvironment } = require('jest-environment-node');

class OnnxEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of [
      'ArrayBuffer',
      'SharedArrayBuffer',
      'DataView',
      'Int8Array',
      'Uint8Array',
      'Uint8ClampedArray',
      'Int16Array',
      'Uint16Array',
      'Int32Array',
      'Uint32Array',
      'Float32Array',
      'Float64Array',
      'BigInt64Array',
      'BigUint64Array',
    ]) {
      this.global[name] = globalThis[name];
    }
  }
}

module.exports = OnnxEnvironment;
