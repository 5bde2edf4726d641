export { authenticate, type AuthContext } from './auth.context';
export * from './auth.guard';
export * from './authenticated.decorator';
