export * from './caller';
export * from './tokens';
