export * from './auth.errors';
export * from './caller';
export * from './tokens';
export * from './access';
export * from './access-policy';
