export { default } from '@flight/eslint-config';
