export * from './access';
export * from './access-policy';
export * from './auth.errors';
export * from './caller';
export * from './tokens';
