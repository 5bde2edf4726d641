export * from './caller';
export * from './tokens';
export * from './access';
