export { type AuthContext, authenticate } from './auth.context';
export * from './auth.guard';
export * from './authenticated.decorator';
