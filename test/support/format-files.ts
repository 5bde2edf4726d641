// The files are made by kb-tools' generators, which `kb-tools bench formats` also times.
export { formatFiles, renderedText } from '../../tools/bench/src/bench/format-files';
